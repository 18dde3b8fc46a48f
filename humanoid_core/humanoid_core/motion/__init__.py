"""Motions: the robots' own motion files and the project's keyframes, scaled and sampled for playback.

Pure Python (no ROS). A player (the trajectory generator node) does::

    motion = load_motion("hoap2", "squat")             # a library name or a file path
    playback = plan_playback(motion, speed=1.0, current=joint_positions_now)
    playback.scaling.describe()                         # tell the user if it was slowed
    playback.trajectory                                 # dense samples for follow_joint_trajectory
    playback.keyframe_times, playback.keyframe_reached(t)  # progress feedback
"""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "bioloid_pages": [
        "BioloidPages",
        "Page",
        "PageStep",
        "motion_to_pages",
        "pages_text",
        "pages_to_motion",
        "read_pages",
        "write_pages",
    ],
    "data": ["load_settings"],
    "formats": [
        "MotionFormat",
        "SavedPose",
        "UnknownMotionFormatError",
        "motion_format",
        "pose_file_format",
        "registered_formats",
    ],
    "keyframes": ["keyframes_text", "read_keyframes", "write_keyframes"],
    "library": ["list_motions", "load_motion", "read_motion_file"],
    "limits": ["JointBounds"],
    "model": ["JointPose", "Motion", "MotionError", "joint_array"],
    "pose_demo": ["pose_demo_motion"],
    "pose_saving": ["append_keyframe", "keyframe_step"],
    "time_scaling": ["peak_rates", "scale_to_limits"],
    "trajectory": ["Playback", "plan_playback", "sample_motion", "transition_motion"],
    "yaml_nodes": ["YamlNode", "compose_file", "format_number", "require_keys"],
})
