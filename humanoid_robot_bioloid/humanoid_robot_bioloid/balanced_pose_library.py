"""The Bioloid library motions P1..P13: the thesis' balanced poses played as its demo did.

``python -m humanoid_robot_bioloid.balanced_pose_library`` regenerates the robot's library
motions ``P*.yaml`` (its folder's ``motions/``, found through
:data:`humanoid_description.runtime_files.MOTION_LIBRARY`) from its folder's
``balanced_poses.yaml``; test_balanced_pose_library.py checks that both agree.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from humanoid_core.motion import JointPose, Motion, pose_demo_motion, write_keyframes
from humanoid_description import MOTION_LIBRARY, load_model, robot_files
from humanoid_robot_bioloid.thesis import ThesisFrame

ROBOT = "bioloid"
#: The balanced poses, in the robot's folder (J1..J18 deg per pose).
BALANCED_POSES = "balanced_poses.yaml"


def write_balanced_pose_library(directory: Path, robot: str = ROBOT) -> list[Path]:
    """(Re)write the library motions P1..P13 from the thesis' balanced poses."""
    model = load_model(robot)
    frame = ThesisFrame(model)
    source = robot_files(robot).config_file(BALANCED_POSES)
    poses = yaml.safe_load(source.read_text())["poses"]
    written = []
    for name, spec in poses.items():
        positions = frame.joint_positions(spec["angles"])
        pose = JointPose(name, model.joints.to_dict(positions), line=0, support="right")
        motion = pose_demo_motion(robot, name, [pose], source=str(source))
        angles = ", ".join(f"{a:g}" for a in spec["angles"])
        motion = Motion(**{**motion.__dict__, "description":
                           f"Balanced pose {name} of Tyropoulos (2008), set by hand on the real robot: from home, "
                           f"shift the weight over the right foot, raise the left foot, go to the pose (single "
                           f"support), hold 2 s, back the same way to home, as the thesis' demo program did. "
                           f"J1..J18 = {angles} deg."})
        path = Path(directory) / f"{name}.yaml"
        write_keyframes(motion, path, units="deg", decimals=4, header=(
            f"Generated from humanoid_description/robots/{robot}/{BALANCED_POSES} ({name}) by\n"
            "python -m humanoid_robot_bioloid.balanced_pose_library; test_balanced_pose_library.py checks "
            "both agree."))
        written.append(path)
    return written


def main() -> int:
    # the robot's motions folder as the library reads it; under a symlink install its files
    # link to the sources, which the writer follows (data_file.write_text_atomically)
    for path in write_balanced_pose_library(MOTION_LIBRARY.path(ROBOT)):
        print(f"written {path.resolve()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
