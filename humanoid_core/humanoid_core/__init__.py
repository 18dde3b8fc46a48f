"""The stack's computations, without ROS (no rclpy, no message package: the dependency test
enforces it); the ROS layer, :mod:`humanoid_control`, converts messages and hosts the nodes.

Rooms, each a subpackage:

- :mod:`~humanoid_core.loop`: the driver seam and the control loop, command validation;
- :mod:`~humanoid_core.guards`: the checks between accepted commands and the driver;
- :mod:`~humanoid_core.motion`: motion files, their formats, interpolation and playback;
- :mod:`~humanoid_core.balance`: CoM, ZMP, support margin, the fall estimate;
- :mod:`~humanoid_core.biped_walking` and :mod:`~humanoid_core.quadruped_gaits`: walking
  patterns and gaits;
- :mod:`~humanoid_core.energy`: the servos' current and energy model;
- :mod:`~humanoid_core.odometry`: kinematic odometry (odom -> base_link) and its drift against a truth;
- :mod:`~humanoid_core.processes`: starting node graphs whose processes die with their launcher.

Top-level modules: :mod:`~humanoid_core.parameter_fields` (typed parameter dataclasses),
:mod:`~humanoid_core.parameter_files` (ROS parameter files read without ROS) and
:mod:`~humanoid_core.command_line` (value types and errors of command-line options).
"""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "command_line": [
        "Section",
        "UsageError",
        "Verb",
        "existing_folder",
        "file_or_stdout",
        "finite_number",
        "host_and_port",
        "integer_in",
        "new_file",
        "new_folder",
        "new_link",
        "non_negative_number",
        "positive_number",
        "robot_name",
        "serial_device",
    ],
    "parameter_fields": ["documented"],
    "parameter_files": ["control_node_defaults", "flatten", "node_parameters"],
    "registrations": ["MOTION_FORMATS", "NODES", "Registration", "VERBS", "registered"],
})
