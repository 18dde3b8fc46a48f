"""``humanoid view``: the robot in a browser page (viser: its web client ships in the wheel,
no internet needed), live from the ROS graph or replayed from a bag."""
