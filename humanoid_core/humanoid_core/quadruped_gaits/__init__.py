"""Quadruped gaits: planar leg inverse kinematics, foot paths and the gait patterns that
phase four legs (ROS-free; evaluated headless by :mod:`humanoid_sim.gait_evaluation`)."""
