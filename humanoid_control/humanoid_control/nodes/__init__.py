"""The control-layer nodes: each a process of its own, driving or watching the robot only
through its interface (``python -m humanoid_control.nodes.<name>``, or ``ros2 run
humanoid_control <name>``).

- :mod:`~humanoid_control.nodes.trajectory_generator`: ``play_motion``;
- :mod:`~humanoid_control.nodes.walk_controller`: ``cmd_vel`` and ``walk`` (bipeds);
- :mod:`~humanoid_control.nodes.gait_controller`: ``play_gait`` (quadrupeds);
- :mod:`~humanoid_control.nodes.balance_monitor`: CoM, ZMP, support polygon, margin;
- :mod:`~humanoid_control.nodes.self_collision_checker`: self-collision state and checks;
- :mod:`~humanoid_control.nodes.fall_manager`: the robot's state with respect to falling;
- :mod:`~humanoid_control.nodes.odometry`: ``odom`` and ``/tf`` (and the simulator's ground truth);
- :mod:`~humanoid_control.nodes.specs`: each node as a process to start.
"""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "specs": [
        "CONTAINER_MODULE",
        "CONTAINER_NICE",
        "CONTROL_CONTAINER",
        "ENERGY_MONITOR",
        "FALL_MANAGER",
        "SELF_COLLISION_CHECKER",
        "WALK_CONTROLLER",
        "balance_monitor_node_spec",
        "container_node_spec",
        "energy_monitor_node_spec",
        "fall_manager_node_spec",
        "gait_controller_node_spec",
        "host_in",
        "ODOMETRY",
        "odometry_node_spec",
        "self_collision_checker_node_spec",
        "trajectory_generator_node_spec",
        "walk_controller_node_spec",
        "with_node_parameters",
    ],
    "container": ["build_node", "destroy_hosted", "hostable", "stop_hosted"],
    "fall_manager": ["FallManagerNode"],
    "gait_controller": ["GaitControllerNode"],
    "odometry": ["OdometryNode"],
    "self_collision_checker": ["SelfCollisionChecker"],
    "trajectory_generator": ["ROBOT_GONE_AFTER", "TrajectoryGenerator"],
    "walk_controller": ["WalkControllerNode"],
})
