"""Kinematic odometry without a simulation (issue 39 item 1): a robot standing still stays at the
origin, a step with the anchor held moves the base by what the kinematics says, and the drift
measure compares two runs in their own start frames."""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest

from humanoid_core.odometry import KinematicOdometry, OdometryParameters, planar_drift
from humanoid_description import load_model


@pytest.mark.parametrize("robot", ["hoap2", "bioloid", "bioloid_quadruped"])
def test_standing_still_stays_at_the_origin(robot):
    model = load_model(robot)
    odometry = KinematicOdometry(model, OdometryParameters())
    home = model.home_positions()
    first = odometry.update(0.0, home)
    for k in range(1, 50):
        estimate = odometry.update(0.01 * k, home)
    assert np.allclose(first.base.translation[:2], 0.0, atol=1e-9)
    assert abs(first.heading) < 1e-9
    assert np.allclose(estimate.base.translation, first.base.translation, atol=1e-9)
    assert estimate.base.translation[2] > 0.05  # the base above the ground
    assert estimate.distance == pytest.approx(0.0, abs=1e-9)
    assert set(estimate.stance) == set(model.config.feet)
    pose, twist = odometry.covariances(estimate)
    assert len(pose) == 36 and len(twist) == 36


def test_the_imu_turns_the_base_but_the_heading_starts_at_zero():
    model = load_model("hoap2")
    odometry = KinematicOdometry(model, OdometryParameters())
    home = model.home_positions()
    turned = pin.utils.rpyToMatrix(0.0, 0.0, 0.7)
    assert abs(odometry.update(0.0, home, turned).heading) < 1e-9
    later = odometry.update(0.01, home, pin.utils.rpyToMatrix(0.0, 0.0, 0.8))
    assert later.heading == pytest.approx(0.1, abs=1e-9)
    assert later.orientation_source == "imu"


def test_planar_drift_compares_each_run_from_its_own_start():
    start_a = pin.SE3(pin.utils.rpyToMatrix(0.0, 0.0, 0.0), np.array([0.0, 0.0, 0.2]))
    end_a = pin.SE3(pin.utils.rpyToMatrix(0.0, 0.0, 0.1), np.array([1.0, 0.0, 0.2]))
    # the same walk seen from a frame turned by 90 deg and shifted, 2 cm short and 1 deg less turned
    start_b = pin.SE3(pin.utils.rpyToMatrix(0.0, 0.0, math.pi / 2), np.array([5.0, 3.0, 0.3]))
    end_b = pin.SE3(pin.utils.rpyToMatrix(0.0, 0.0, math.pi / 2 + 0.1 - math.radians(1.0)),
                    np.array([5.0, 3.98, 0.3]))
    error, heading = planar_drift(start_a, end_a, start_b, end_b)
    assert error == pytest.approx(0.02, abs=1e-9)
    assert math.degrees(heading) == pytest.approx(1.0, abs=1e-9)


def test_the_quadruped_trotting_on_its_set_points_goes_its_stride_and_makes_up_no_turn():
    """The trot's set-points as joint readings: the stance diagonal's feet keep their distances,
    the body goes straight. Each half cycle a stance pair sweeps the whole stride (2 ``half_stride``)
    backwards under the body, so with the balls held where they came down (``ball_rolling`` off)
    the base goes 4 ``half_stride`` a cycle and does not turn; rolling, the balls carry it
    further by their radius times the legs' sweep (the simulator's trot:
    humanoid_sim/test/test_gait_walks.py). Levelled on its three lowest balls, the lower swinging
    foot looked as low as the stance pair: counted standing while it swung forward, it turned the
    heading 13.6 deg and kept the base near where it started (20 mm of 160)."""
    from humanoid_core.quadruped_gaits import GaitControllerParameters, GaitPlayer, IKGait, default_parameters

    robot = "bioloid_quadruped"
    model = load_model(robot)
    period = GaitControllerParameters.for_robot(robot).period
    gait = default_parameters(model, frequency=0.5, foot_path="flat")
    player = GaitPlayer(IKGait(model, "trot", gait), period, "trot")
    cycles = 2
    expected = cycles * 4.0 * gait.half_stride
    for rolling in (False, True):
        odometry = KinematicOdometry(model, OdometryParameters.for_robot(robot, ball_rolling=rolling))
        headings = []
        for k in range(round(cycles / gait.frequency / period)):
            estimate = odometry.update(k * period, player.setpoint(k))
            headings.append(math.degrees(estimate.heading))
        assert max(abs(h) for h in headings) < 1.0, (rolling, min(headings), max(headings))
        gone = estimate.base.translation[0]
        if rolling:
            assert expected * 1.02 < gone < expected * 1.2
        else:
            assert gone == pytest.approx(expected, rel=0.05)
        assert abs(estimate.base.translation[1]) < 0.05 * expected
