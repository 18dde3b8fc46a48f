"""Tools around a running or recorded robot, for the workstation (not the robot's computer).

- :mod:`~humanoid_tools.recording`: ``humanoid record`` (rosbag2 bags in MCAP, without ROS' rosbag2);
- :mod:`~humanoid_tools.plots`: ``humanoid plot`` (PNG figures from a bag alone);
- :mod:`~humanoid_tools.view`: ``humanoid view`` (the robot in a browser page, live or replaying a bag);
- :mod:`~humanoid_tools.posing`: ``humanoid pose`` (posing joint by joint from standard input).
"""
