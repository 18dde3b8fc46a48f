"""The ``humanoid`` verbs of the simulation (entry point group ``humanoid.verbs``). Only
descriptors: nothing is imported until a verb is chosen."""

from humanoid_core import Section, Verb

VERBS = (
    Verb("sim", "humanoid_sim.sim_command", "bring up the simulated robot (the same graph as sim.launch.py) until "
                                            "interrupted or --duration ends", Section.BRING_UP),
)
