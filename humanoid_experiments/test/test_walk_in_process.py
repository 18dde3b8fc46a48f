"""A walk whose trajectories the robot refused for a while: the walk controller's cycle in
process on the simulated Bioloid (real physics, the control loop's own validation), from the
pose the Bioloid's servos start up in on the emulated bus (the shoulders down), the robot
refusing every trajectory sent over the first third of a second of the walk, as the front
refuses trajectories that come too late. The controller streams open loop: without telling
from the measured joints that the robot did not move, it would go on sending a motion the
robot can no longer join (the crouch lifts the shoulders by a radian), and the robot would
stay frozen where it stood, as it did on CI's emulated bus."""

from __future__ import annotations

import numpy as np
import pytest

from humanoid_core.loop import CommandRejectedError, ErrorCode, farthest_joint
from humanoid_experiments import InProcessWalker
from humanoid_sim import REFERENCE, SimulatedRobot

ROBOT = "bioloid"
REFUSED = (0.0, 1.5)  # robot seconds after the walk was asked for: most of the crouch
SHOULDERS_DOWN = {"r_shoulder_pitch": 0.588, "l_shoulder_pitch": 0.588}  # rad, the start-up pose's


def test_a_walk_the_robot_refused_for_a_while_goes_on_from_where_it_stopped_and_stands():
    with SimulatedRobot(ROBOT, REFERENCE) as robot:
        pose = robot.driver.read().position.copy()
        for joint, value in SHOULDERS_DOWN.items():
            pose[robot.model.joints.index(joint)] = value
        robot.follow([1.0], [pose])
        walker = InProcessWalker(robot)
        robot.run_for(1.0)
        began = robot.now()
        send = robot.send

        def refusing(times, positions, velocities, start_time):
            if REFUSED[0] <= start_time - began < REFUSED[1]:
                raise CommandRejectedError(ErrorCode.INVALID_GOAL, "refused by the test (as if it came late)")
            return send(times, positions, velocities, start_time=start_time)

        robot.send = refusing
        report = walker.walk(0.2)
        final = walker.stream.batcher.last_sent
        robot.run_until(final.stamp + 0.5)
        measured = robot.driver.read().position
    refusals = [m for m in walker.messages if "refused by the test" in m]
    assert refusals
    assert not any("rejected" in m and "refused by the test" not in m for m in walker.messages), walker.messages
    resumed = [m for m in walker.messages if "did not take the set-points sent" in m]
    assert len(resumed) == 1, walker.messages  # once, then followed
    assert not report.fell and report.error_code == 0, report.text()
    joint, error = farthest_joint(measured, final.positions)
    assert error < 0.05, (robot.model.joints.names[joint], error, walker.messages)
    assert not np.any(final.velocities)  # the final stance, at rest
    assert report.distance_m == pytest.approx(0.2, abs=0.05), report.text()
