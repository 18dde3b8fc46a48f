"""The guards of the command path: checks between accepted commands and the driver.

The control loop calls one guard (:class:`~humanoid_core.loop.command_guard.CommandGuard`,
the interface); a driver node gives it a :class:`~humanoid_core.guards.composite.CompositeGuard`
of the checks it runs, today the self-collision veto
(:mod:`humanoid_core.guards.self_collision_guard`, which samples trajectories along
:mod:`humanoid_core.guards.trajectory_collision`).
"""
