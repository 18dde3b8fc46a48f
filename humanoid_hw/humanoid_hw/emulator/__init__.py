"""A Dynamixel bus emulator: servos speaking the real byte protocol on a pseudo-terminal.

In-process: ``BusEmulator({1: "AX-12", 2: "AX-12"}).start()``, then open ``.port``.
Command line: ``humanoid emulate --robot bioloid`` (see :mod:`.cli`).
"""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "chain": ["BusEmulator", "OUTPUT_FLUSH_WARNING"],
    "cli": ["dynamixel_robot", "robot_servos"],
    "packets": [
        "InstructionPacket",
        "PacketParser",
        "crc16",
        "instruction_packet",
        "status_packet",
        "stuff",
        "unstuff",
    ],
    "process": ["emulator_process"],
    "servo": ["EmulatedServo"],
})
