"""The ROS front of the robot interface, and what every node of the stack is made of.

- :mod:`~humanoid_control.ros.robot_interface` and :mod:`~humanoid_control.ros.driver_node`:
  the topics, action and services a driver node serves (sim and hardware alike);
- :mod:`~humanoid_control.ros.robot_client`: the same interface seen from a controller;
- node support: :mod:`~humanoid_control.ros.node_main`, :mod:`~humanoid_control.ros.parameters`,
  :mod:`~humanoid_control.ros.offload`, :mod:`~humanoid_control.ros.ros_time`,
  :mod:`~humanoid_control.ros.action_result`, :mod:`~humanoid_control.ros.matched_publisher`,
  :mod:`~humanoid_control.ros.joint_readings`.
"""
