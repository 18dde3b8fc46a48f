"""Experiments and benchmarks, for the workstation (not the robot's computer).

Experiments (each a ``humanoid`` command): :mod:`~humanoid_experiments.demo`,
:mod:`~humanoid_experiments.walk`, :mod:`~humanoid_experiments.postures`,
:mod:`~humanoid_experiments.balance_poses`, :mod:`~humanoid_experiments.gaits` and the gait
search on Ray (:mod:`~humanoid_experiments.gait_search`); benchmarks in
:mod:`~humanoid_experiments.bench` (``humanoid bench TARGET``), each printing its figure
beside a baseline measured in the same run.
"""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "demo": ["demo_trajectory"],
    "gaits": ["OUTCOMES", "classify"],
    "getup": ["GetupWatch"],
    "local_ray": ["START_ATTEMPTS", "STARTUP_TIMEOUT_WORDS", "marked_processes", "ray_processes",
                  "started_again"],
    "push": ["Trial", "bisect"],
    "teleop": ["Segment"],
    "walk": ["WalkWitness"],
    "walk_in_process": ["InProcessWalker"],
})
