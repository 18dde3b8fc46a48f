"""The control-layer nodes: each a process of its own, driving or watching the robot only
through its interface (``python -m humanoid_control.nodes.<name>``, or ``ros2 run
humanoid_control <name>``).

- :mod:`~humanoid_control.nodes.trajectory_generator`: ``play_motion``;
- :mod:`~humanoid_control.nodes.walk_controller`: ``cmd_vel`` and ``walk`` (bipeds);
- :mod:`~humanoid_control.nodes.balance_monitor`: CoM, ZMP, support polygon, margin;
- :mod:`~humanoid_control.nodes.self_collision_checker`: self-collision state and checks;
- :mod:`~humanoid_control.nodes.fall_manager`: the robot's state with respect to falling;
- :mod:`~humanoid_control.nodes.specs`: each node as a process to start.
"""
