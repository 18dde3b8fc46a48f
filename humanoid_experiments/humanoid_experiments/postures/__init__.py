"""The postures protocol: quasi-static balance limits, measured through the robot interface."""
