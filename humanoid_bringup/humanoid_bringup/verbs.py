"""The ``humanoid`` verbs of the bring-up (entry point group ``humanoid.verbs``): what a
robot's computer runs. Only descriptors: nothing is imported until a verb is chosen."""

from humanoid_core import Section, Verb

VERBS = (
    Verb("describe", "humanoid_bringup.describe_command",
         "print a robot's joints and limits, total mass, and CoM and soles in the home pose", Section.BRING_UP),
    Verb("real", "humanoid_bringup.real_command", "bring up the real robot on its Dynamixel bus (the same graph as "
                                                  "real.launch.py), or on the bus emulator", Section.BRING_UP),
)
