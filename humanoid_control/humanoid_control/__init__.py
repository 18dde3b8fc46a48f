"""The shared robot interface, its controllers and observers.

Rooms, each a subpackage:

- :mod:`~humanoid_control.loop`: the driver seam and the ROS-free control loop;
- :mod:`~humanoid_control.guards`: the checks between accepted commands and the driver;
- :mod:`~humanoid_control.ros`: the ROS front (served identically by sim and hardware) and
  node support;
- :mod:`~humanoid_control.processes`: starting node graphs whose processes die with their launcher;
- :mod:`~humanoid_control.nodes`: the controller and observer nodes;
- libraries without ROS: :mod:`~humanoid_control.motion` (motion files, playback),
  :mod:`~humanoid_control.balance` (CoM, ZMP, margin), :mod:`~humanoid_control.biped_walking`,
  :mod:`~humanoid_control.quadruped_gaits`.

Top-level modules: :mod:`~humanoid_control.parameter_fields` (typed parameter dataclasses),
:mod:`~humanoid_control.parameter_files` (ROS parameter files read without ROS) and
:mod:`~humanoid_control.command_line` (value types and errors of command-line options).
"""
