"""The guards of the command path: checks between accepted commands and the driver.

The control loop calls one guard (:class:`~humanoid_core.loop.command_guard.CommandGuard`,
the interface); a driver node gives it a :class:`~humanoid_core.guards.composite.CompositeGuard`
of the checks it runs, today the self-collision veto
(:mod:`humanoid_core.guards.self_collision_guard`, which samples trajectories along
:mod:`humanoid_core.guards.trajectory_collision`).
"""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "composite": ["CompositeGuard"],
    "parameters": ["PARAMETER_PREFIX", "SelfCollisionGuardParameters"],
    "self_collision_guard": ["SelfCollisionGuard"],
    "trajectory_collision": ["FINEST_PERIOD", "check_path", "check_trajectory", "sample_times"],
})
