"""A reset forgets what the robot went through: the same reset followed by the same commands
gives the same motion, to the last bit, whatever came before (a motion, a long stand, nothing).
Experiments that reset between trials rely on it (get-up trials, postures tests, a fit's
evaluations): a trial's physics must not carry the trials before it. (PyBullet keeps state in a
body that resetting its joints and base does not clear; the driver loads the body afresh at
each reset. A postures test's timing against the publishing grid is another matter:
docs/postures.md.)"""

from __future__ import annotations

import numpy as np
import pytest

from humanoid_sim import SimulatedRobot

#: Control cycles traced after each reset (the robot settling on its feet, then holding).
CYCLES = 150


def base_path(robot: SimulatedRobot) -> np.ndarray:
    """Reset to the home pose, hold it: the base's position and orientation at each cycle."""
    robot.reset()
    path = []
    for _ in range(CYCLES):
        robot.cycle()
        pose = robot.driver.base_placement()
        path.append(np.concatenate([pose.translation, pose.rotation.ravel()]))
    return np.array(path)


@pytest.mark.parametrize("name", ["hoap2", "bioloid"])
def test_the_motion_after_a_reset_does_not_depend_on_what_came_before(name):
    with SimulatedRobot(name) as robot:
        first = base_path(robot)
        home = robot.model.home_positions()
        bent = home.copy()
        bent[robot.model.joints.index(robot.model.joints.names[0])] += 0.2  # a joint moved and held
        robot.follow([0.5], [bent])
        robot.run_for(3.0)
        after_a_motion = base_path(robot)
        robot.run_for(5.0)
        after_standing = base_path(robot)
    assert np.array_equal(first, after_a_motion)
    assert np.array_equal(first, after_standing)
