"""Bringing the robot up: the stack's node graphs (:mod:`~humanoid_bringup.graphs`), the
launch files' helpers (:mod:`~humanoid_bringup.launch_parameters`, and their checks,
:mod:`~humanoid_bringup.launch_checks`) and the ``humanoid`` command's entry
(:mod:`~humanoid_bringup.cli`), which lists the verbs the installed packages register:
its own (:mod:`~humanoid_bringup.verbs`: ``describe``, ``real``) and, where they are
installed, the simulation's, the bus emulator's, the tools' and the experiments'."""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "cli": ["build_parser", "main"],
    "graphs": ["RECORDER_NODE", "control_nodes", "hosted", "real_nodes", "recorder_node"],
    "launch_checks": ["calls", "check_driver_leaves_description", "check_launch_file", "check_launchable", "parse"],
    "launch_parameters": [
        "FullInstallTools",
        "GRAPH_SWITCHES",
        "MissingPackageError",
        "NAMESPACE_ARGUMENT",
        "driver_exited",
        "full_install_tools",
        "graph_switches",
        "installed",
        "launch_actions",
        "launch_node",
        "number_or_none",
        "recording_failed",
        "ros2_bag_record",
        "state_publisher_parameters",
        "tethered",
        "tool_nodes",
    ],
    "serving": ["NAMESPACE_PROBE", "OWN_ROBOT_HELP", "add_graph_switches", "add_own_robot_namespace",
                "add_refused_namespace", "free_namespace", "serve", "with_recorder"],
})
