"""Supply current, power and energy of the robot estimated from its joint readings (no ROS)."""
