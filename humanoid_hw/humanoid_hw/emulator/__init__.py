"""A Dynamixel bus emulator: servos speaking the real byte protocol on a pseudo-terminal.

In-process: ``BusEmulator({1: "AX-12", 2: "AX-12"}).start()``, then open ``.port``.
Command line: ``humanoid emulate --robot bioloid`` (see :mod:`.cli`).
"""

from humanoid_hw.emulator.chain import BusEmulator
from humanoid_hw.emulator.servo import EmulatedServo

__all__ = ["BusEmulator", "EmulatedServo"]
