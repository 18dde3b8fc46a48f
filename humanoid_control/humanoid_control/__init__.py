"""The ROS layer: the shared robot interface's front, its controllers and observers.

Rooms, each a subpackage:

- :mod:`~humanoid_control.ros`: the ROS front (served identically by sim and hardware), message
  conversion and node support;
- :mod:`~humanoid_control.nodes`: the controller and observer nodes and their container.

The computations they serve (control loop, guards, motion, balance, walking, gaits, energy,
processes) are the ROS-free package :mod:`humanoid_core`.
"""
