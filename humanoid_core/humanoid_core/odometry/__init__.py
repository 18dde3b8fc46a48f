"""Odometry of the walking robots from their joint readings (no ROS): where the base has gone
since the start, anchored on the feet that stand on the ground, with the IMU's orientation where
there is one; and the comparison of an odometry with a ground truth (drift)."""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "kinematic": ["KinematicOdometry", "OdometryEstimate", "planar_drift", "yaw_of"],
    "parameters": ["NODE_NAME", "OdometryParameters"],
})
