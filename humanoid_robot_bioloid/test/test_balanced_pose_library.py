"""The Bioloid's balanced-pose library motions P1..P13 are the thesis' poses, played as its demo
did, and what the generator (balanced_pose_library) writes today."""

import numpy as np
import pytest
import yaml

from humanoid_core.motion import JointPose, load_motion, pose_demo_motion
from humanoid_description import load_model, robot_files
from humanoid_robot_bioloid.thesis import ThesisFrame

BALANCED = {f"P{i}" for i in range(1, 14)}


@pytest.mark.parametrize("name", sorted(BALANCED))
def test_balanced_pose_motions_are_the_thesis_poses(name):
    poses = yaml.safe_load(robot_files("bioloid").config_file("balanced_poses.yaml").read_text())["poses"]
    motion = load_motion("bioloid", name)
    model = load_model("bioloid")
    expected = ThesisFrame(model).joint_positions(poses[name]["angles"])
    np.testing.assert_allclose(motion.positions[3], expected, atol=1e-6)
    home = model.home_positions()
    np.testing.assert_allclose(motion.positions[0], home, atol=1e-6)
    np.testing.assert_allclose(motion.positions[-1], home, atol=1e-6)
    assert motion.holds[3] == 2.0 and motion.support(3) == "right"
    assert [motion.label(i) for i in range(motion.keyframe_count)] == [
        "home", "weight on the right foot", "left foot raised", name, "left foot raised",
        "weight on the right foot", "home"]
    # the library file is what the generator writes today
    regenerated = pose_demo_motion("bioloid", name, [JointPose(name, model.joints.to_dict(expected), 0, "right")])
    np.testing.assert_allclose(motion.positions, regenerated.positions, atol=1e-4)
