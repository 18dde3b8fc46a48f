"""``python -m humanoid_hw.emulator``: the same as ``humanoid emulate``."""

import sys

from humanoid_hw.emulator.cli import main

sys.exit(main())
