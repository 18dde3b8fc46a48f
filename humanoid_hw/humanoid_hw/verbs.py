"""The ``humanoid`` verbs of the Dynamixel package (entry point group ``humanoid.verbs``).
Only descriptors: nothing is imported until a verb is chosen."""

from humanoid_core import Section, Verb

VERBS = (
    Verb("emulate", "humanoid_hw.emulator.cli", "emulate a robot's chain of Dynamixel servos on a pseudo-terminal; "
                                                "prints its path first, serves until interrupted", Section.BRING_UP),
)
