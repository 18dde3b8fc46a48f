"""What a command's local Ray instance left running, for the tests of the commands that start
one (``humanoid optimize-gait``, ``humanoid identify``)."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence

from humanoid_experiments import ray_processes


def said_session_dir(output: str) -> str:
    """The instance's directory, as the command said it ("on a local Ray instance (DIR)"):
    Ray's agents write their process title over their environment, the owner's mark with it,
    and are found by the logs they hold open there."""
    found = re.search(r"on a local Ray instance \((/[^)]+)\)", output)
    assert found is not None, f"the command did not say where its Ray instance is: {output[-2000:]}"
    return found.group(1)


def wait_until_gone(owner: int, session_dirs: Sequence[str], timeout: float = 30.0) -> list[int]:
    """``owner``'s Ray processes still running once none is left or ``timeout`` s passed."""
    deadline = time.monotonic() + timeout
    while (left := ray_processes(owner, session_dirs)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left
