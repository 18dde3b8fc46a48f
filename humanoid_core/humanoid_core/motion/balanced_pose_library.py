"""The Bioloid library motions P1..P13: the thesis' balanced poses played as its demo did.

``python -m humanoid_core.motion.balanced_pose_library`` regenerates
``config/motions/bioloid/P*.yaml`` from
``humanoid_description/robots/bioloid/balanced_poses.yaml``; test_motion_library.py
checks that both agree.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from humanoid_core.motion.keyframes import write_keyframes
from humanoid_core.motion.model import JointPose, Motion
from humanoid_core.motion.pose_demo import pose_demo_motion
from humanoid_description.bioloid_thesis.pose_analysis import ThesisFrame
from humanoid_description.model import load_model
from humanoid_description.robots import robot_files

ROBOT = "bioloid"


def write_balanced_pose_library(directory: Path) -> list[Path]:
    """(Re)write the library motions P1..P13 from the thesis' balanced poses."""
    model = load_model(ROBOT)
    frame = ThesisFrame(model)
    source = robot_files(ROBOT).config_file("balanced_poses.yaml")
    poses = yaml.safe_load(source.read_text())["poses"]
    written = []
    for name, spec in poses.items():
        positions = frame.joint_positions(spec["angles"])
        pose = JointPose(name, model.joints.to_dict(positions), line=0, support="right")
        motion = pose_demo_motion(ROBOT, name, [pose], source=str(source))
        angles = ", ".join(f"{a:g}" for a in spec["angles"])
        motion = Motion(**{**motion.__dict__, "description":
                           f"Balanced pose {name} of Tyropoulos (2008), set by hand on the real robot: from home, "
                           f"shift the weight over the right foot, raise the left foot, go to the pose (single "
                           f"support), hold 2 s, back the same way to home, as the thesis' demo program did. "
                           f"J1..J18 = {angles} deg."})
        path = Path(directory) / f"{name}.yaml"
        write_keyframes(motion, path, units="deg", decimals=4, header=(
            f"Generated from humanoid_description/robots/bioloid/balanced_poses.yaml ({name}) by\n"
            "python -m humanoid_core.motion.balanced_pose_library; test_motion_library.py checks both agree."))
        written.append(path)
    return written


def main() -> int:
    directory = Path(__file__).resolve().parents[3] / "humanoid_description" / "robots" / ROBOT / "motions"  # source
    for path in write_balanced_pose_library(directory):
        print(f"written {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
