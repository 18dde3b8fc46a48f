"""The balance monitor's flat-feet estimate and the thesis' static analysis (balance-poses)
describe the same support of the Bioloid."""

import pytest

from humanoid_core.balance import BalanceEstimator, BalanceParameters
from humanoid_description import load_model
from humanoid_robot_bioloid.thesis import ThesisFrame


def estimator(model, **overrides):
    """The robot's estimator; the measured ZMP raw (its low-pass is tested on its own)."""
    return BalanceEstimator(model, BalanceParameters.for_robot(model.name, **{"zmp_measured_cutoff": 0.0,
                                                                               **overrides}))


def test_bioloid_flat_feet_margin_equals_the_balance_poses_analysis_of_the_same_pose():
    """balance-poses' static analysis (thesis frame, right foot on the ground, left corners
    within 2 mm of its plane) and the monitor's flat-feet assumption describe the same
    support: the margins agree for the home pose (one left corner 2.2 mm below the right
    sole's plane: left out by both) and for every thesis pose standing on the right foot."""
    model = load_model("bioloid")
    frame = ThesisFrame(model)
    poses = [model.home_positions(), model.pose_positions("zero"),
             *(frame.joint_positions(angles) for angles in thesis_pose_angles())]
    compared = 0
    for q in poses:
        analysis = frame.analyse(frame.angles_deg(q))
        result = estimator(model).update(0.0, q)
        if not result.contacts["right"]:  # the model's left sole is the lower one (P5): not the thesis' support
            continue
        assert result.margin * 1000.0 == pytest.approx(analysis.margin_mm, abs=1e-6)
        compared += 1
    assert compared >= len(poses) - 1


def thesis_pose_angles():
    import yaml

    from humanoid_description import robot_files

    data = yaml.safe_load(robot_files("bioloid").config_file("balanced_poses.yaml").read_text())
    return [pose["angles"] for pose in data["poses"].values()]
