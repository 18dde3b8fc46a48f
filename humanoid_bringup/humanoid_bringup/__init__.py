"""Bringing the robot up: the stack's node graphs (:mod:`~humanoid_bringup.graphs`), the
launch files' helpers (:mod:`~humanoid_bringup.launch_parameters`, and their checks,
:mod:`~humanoid_bringup.launch_checks`) and the ``humanoid`` command's entry
(:mod:`~humanoid_bringup.cli`), which lists the verbs the installed packages register:
its own (:mod:`~humanoid_bringup.verbs`: ``describe``, ``real``) and, where they are
installed, the simulation's, the bus emulator's, the tools' and the experiments'."""
