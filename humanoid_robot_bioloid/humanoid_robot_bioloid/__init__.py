"""The ROBOTIS Bioloid humanoid's own code, without ROS: Tyropoulos (2008) and what is built on it.

- :mod:`.thesis`: the thesis' equations and the research tools built on them (the
  description's kinematics and shapes generators, the mass identification, pose files and
  pose analysis in the thesis frame);
- :mod:`.poses`: the robot's pose files (thesis poses J1..J18, raw poses by motor ID), read
  as joint positions, played as the thesis' demo, a pose appended in the thesis convention;
- :mod:`.motion_format`: those files registered as the motion format ``bioloid_thesis_poses``
  (entry point ``humanoid.motion_formats`` in ``setup.py``); the robot's folder
  (``humanoid_description/robots/bioloid/robot.yaml``) declares it for its ``.csv`` files;
- :mod:`.balanced_pose_library`: regenerates the library motions P1..P13 from the thesis'
  balanced poses.
"""

import lazy_loader

# The room's public face: what other rooms use, imported on first use (lazy_loader).
__getattr__, __dir__, __all__ = lazy_loader.attach(__name__, submod_attrs={
    "poses": [
        "RawPose",
        "is_raw_pose_file",
        "raw_to_joint_poses",
        "read_raw_poses",
        "read_thesis_poses",
        "write_raw_poses",
    ],
})
