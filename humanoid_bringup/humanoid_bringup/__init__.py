"""Bringing the robot up: the stack's node graphs (:mod:`~humanoid_bringup.graphs`), the
launch files' helpers (:mod:`~humanoid_bringup.launch_parameters`) and the ``humanoid``
command's entry (:mod:`~humanoid_bringup.cli`), which finds the tools and experiments in
their own packages when they are installed."""
