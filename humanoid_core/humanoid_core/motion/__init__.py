"""Motions: the robots' own motion files and the project's keyframes, scaled and sampled for playback.

Pure Python (no ROS). A player (the trajectory generator node) does::

    motion = load_motion("hoap2", "squat")             # a library name or a file path
    playback = plan_playback(motion, speed=1.0, current=joint_positions_now)
    playback.scaling.describe()                         # tell the user if it was slowed
    playback.trajectory                                 # dense samples for follow_joint_trajectory
    playback.keyframe_times, playback.keyframe_reached(t)  # progress feedback
"""

from humanoid_core.motion.library import list_motions, load_motion, read_motion_file
from humanoid_core.motion.limits import JointBounds
from humanoid_core.motion.model import Motion, MotionError
from humanoid_core.motion.time_scaling import TimeScaling, scale_to_limits
from humanoid_core.motion.trajectory import Playback, Trajectory, plan_playback, sample_motion

__all__ = [
    "JointBounds",
    "Motion",
    "MotionError",
    "Playback",
    "TimeScaling",
    "Trajectory",
    "list_motions",
    "load_motion",
    "plan_playback",
    "read_motion_file",
    "sample_motion",
    "scale_to_limits",
]
