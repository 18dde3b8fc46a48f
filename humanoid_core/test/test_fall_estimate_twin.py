"""The fall estimate of a robot without an IMU (the Bioloids on their bus), ROS-free: every
gait and walk the robot plays and every motion in its folder, fed set-point by set-point
through the balance estimator and the fall detector as the balance monitor feeds them
(no sensors: flat feet or balls on flat ground), never says fallen; a posture that cannot
be stood in still does, after ``fall_hold``.

The twin of the emulated bus (test/test_fall_manager_hw.py plays the gaits and motions
there): the bus's servos follow these set-points, so a fall the estimate says here it says
there. The quadruped's trot said fallen at every step before the estimate used the reach
polygon (its diagonal support is a line the CoM leaves at every step)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from humanoid_core.balance import BalanceEstimator, BalanceParameters, FallDetector, FallManagerParameters, FallSource
from humanoid_core.biped_walking import WalkController, WalkParameters
from humanoid_core.motion import list_motions, load_motion, sample_motion
from humanoid_core.quadruped_gaits import FREQUENCY_RANGE, gait_phases, load_gait
from humanoid_description import RobotModel

PERIOD = 0.01
QUADRUPED = "bioloid_quadruped"
#: Each gait is fed one whole cycle at each frequency, its first set-point and the one a cycle
#: later included: an IK gait is periodic from its first set-point, and more cycles repeat the
#: same margins (measured: the worst margin of one cycle equals that of 2 s, two to four
#: cycles, for every gait and frequency; 2 s of each were fed before).
CYCLES = 1


class Twin:
    """The balance monitor's fall estimate of one robot without an IMU."""

    def __init__(self, robot: str) -> None:
        self.model = RobotModel(robot)
        params = BalanceParameters.for_robot(robot)
        self.estimator = BalanceEstimator(self.model, params)
        self.detector = FallDetector(params.fall_tilt, params.fall_tilt_hysteresis, params.fall_margin,
                                     params.fall_hold)
        self.worst = math.inf  # the smallest reach margin seen, m
        self.fallen_at: float | None = None

    def feed(self, stamp: float, positions: np.ndarray) -> bool:
        estimate = self.estimator.update(stamp, positions)
        fall = self.detector.from_support(estimate.reach_margin, stamp)
        assert fall.source is FallSource.SUPPORT
        self.worst = min(self.worst, estimate.reach_margin)
        if fall.fallen and self.fallen_at is None:
            self.fallen_at = stamp
        return fall.fallen


@pytest.mark.parametrize("gait", sorted(gait_phases(RobotModel(QUADRUPED))))
def test_no_quadruped_gait_is_a_fall(gait):
    model = RobotModel(QUADRUPED)
    low, high = FREQUENCY_RANGE
    for frequency in (low, 1.0, high):
        twin = Twin(QUADRUPED)
        player = load_gait(model, gait, PERIOD, frequency)
        for k in range(round(CYCLES / (frequency * PERIOD)) + 1):
            twin.feed(k * PERIOD, player.setpoint(k))
        assert twin.fallen_at is None, f"{gait} at {frequency} Hz: fallen at t = {twin.fallen_at:.2f} s"
        # not even the hold starts: the CoM never leaves the reach polygon by the fall margin
        assert twin.worst > -BalanceParameters.for_robot(QUADRUPED).fall_margin, (gait, frequency, twin.worst)


@pytest.mark.parametrize("robot", ["bioloid", QUADRUPED, "hoap2"])
def test_no_motion_of_the_robots_folder_is_a_fall(robot):
    model = RobotModel(robot)
    getup = FallManagerParameters().getup_prefix
    for name in list_motions(robot):
        if name.startswith(getup):  # starts lying down: the fall it gets up from
            continue
        motion = load_motion(robot, name)
        samples = sample_motion(motion, PERIOD)
        columns = [model.joints.index(joint) for joint in samples.joint_names]
        twin = Twin(robot)
        positions = model.home_positions().copy()
        for stamp, row in zip(samples.times, samples.positions, strict=True):
            positions[columns] = row
            twin.feed(float(stamp), positions)
        assert twin.fallen_at is None, f"{robot} {name}: fallen at t = {twin.fallen_at:.2f} s"


@pytest.mark.parametrize("robot", ["bioloid", "hoap2"])
@pytest.mark.parametrize("goal", [(0.15, 0.0, 0.0), (-0.06, 0.0, 0.0), (0.0, 0.05, 0.0), (0.0, 0.0, 0.6)])
def test_no_walk_is_a_fall(robot, goal):
    """The walk controller's set-points of a walk forward, backward, sideways and turning."""
    model = RobotModel(robot)
    controller = WalkController(model, WalkParameters.for_robot(robot))
    walk = controller.walk_to(*goal)
    twin = Twin(robot)
    positions = model.pose_positions(controller.params.posture)
    now = 0.0
    while not walk.done and now < 30.0:
        setpoint = controller.update(now, positions)
        if setpoint is not None:
            positions = setpoint.positions
        twin.feed(now, positions)
        now += PERIOD
    assert walk.done and controller.steps(walk) > 0
    assert twin.fallen_at is None, f"{robot} walk {goal}: fallen at t = {twin.fallen_at:.2f} s"


def test_a_posture_that_cannot_stand_is_a_fall_after_the_hold():
    """The Bioloid leaning 30 deg forward on its ankles: the CoM far in front of its toes."""
    robot = "bioloid"
    model = RobotModel(robot)
    hold = BalanceParameters.for_robot(robot).fall_hold
    twin = Twin(robot)
    home = model.home_positions()
    leaning = home.copy()
    for joint in ("r_ankle_pitch", "l_ankle_pitch"):
        leaning[model.joints.index(joint)] += math.radians(-30.0)
    assert not twin.feed(0.0, home)
    assert not twin.feed(1.0, leaning)  # one reading: not yet
    assert twin.worst < -BalanceParameters.for_robot(robot).fall_margin
    assert not twin.feed(1.0 + 0.5 * hold, leaning)
    assert twin.feed(1.0 + hold, leaning)
    assert twin.feed(1.5, leaning)  # held
    assert not twin.feed(2.0, home)  # back inside: up again
