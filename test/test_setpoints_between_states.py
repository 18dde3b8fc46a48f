"""A streamed set-point that takes effect between two published states goes out at its own cycle.

The HOAP-2's loop runs at 200 Hz and publishes its state at 100 Hz. A step on
``joint_commands`` that arrives between two states is written in the cycle between them; with
the states' set-points alone, a replay interpolating them ramps the step over 10 ms (2 mrad RMS
off a 1 rad step: ``humanoid bench replay --robot hoap2`` at real time). The state publisher
sends it too, stamped with its own cycle, before the next state's set-point; the replay of what
a subscriber took then writes the step at that very cycle.

In-process: the simulated HOAP-2's control loop (real PyBullet) with the node's state publisher
on a real rclpy node, a subscription on ``joint_setpoints`` in another node of this process.
"""

from __future__ import annotations

import numpy as np
import pytest
from rclpy.executors import SingleThreadedExecutor
from sensor_msgs.msg import JointState
from system_support import publishing_robot

from humanoid_control.ros import poll_until, topics

ROBOT = "hoap2"
JOINT = "rarm_joint4"
STEP = -1.0  # rad, inside the elbow's range from home


def seconds(msg: JointState) -> float:
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


@pytest.fixture
def published():
    """The robot, its state publisher, and what a ``joint_setpoints`` subscriber takes."""
    with publishing_robot(ROBOT, {topics.JOINT_SETPOINTS: JointState}) as running:
        yield running.robot, running.cycle, running.taken[topics.JOINT_SETPOINTS], running.executor


def test_a_step_between_two_states_goes_out_at_its_own_cycle(published) -> None:
    robot, cycle, taken, executor = published
    assert round(robot.settings.interface.control_rate / robot.settings.interface.publish_rate) == 2
    column = list(robot.model.joints.names).index(JOINT)
    cycle(20)
    drain(executor)
    while True:  # a cycle that publishes its state, so that the next one lies between two states
        state = robot.cycle()
        drain(executor)
        if taken and abs(seconds(taken[-1]) - state.stamp) < 1e-6:
            break
    taken.clear()
    home = robot.loop.written.position.copy()
    robot.loop.stream([JOINT], [home[column] + STEP])  # no velocity: the driver's own profile
    stepped_at = robot.cycle().stamp  # the step is written in this cycle, which publishes no state
    cycle(10)
    poll_until(lambda: spun(executor) and any(seconds(msg) > stepped_at + 0.04 for msg in taken),
               "the set-points after the step", 10.0)
    times = np.array([seconds(msg) for msg in taken])
    positions = np.array([msg.position[column] for msg in taken])
    assert np.all(np.diff(times) > 0.0), times  # in the robot's time order, each cycle once
    at_step = np.flatnonzero(np.isclose(times, stepped_at, atol=1e-6))
    assert len(at_step) == 1, (stepped_at, times)  # the cycle between two states went out
    (k,) = at_step
    assert positions[k] == pytest.approx(home[column] + STEP)
    assert k == 0 and times[k] == pytest.approx(state.stamp + robot.period)  # right after that state
    assert state.stamp < stepped_at < times[k + 1]


def test_set_points_on_the_line_between_two_states_go_out_with_the_states_only(published) -> None:
    """Set-points that change every cycle but stay on the line between the states' set-points (a
    trajectory's, smooth) are not sent between states: the states' own interpolate them."""
    robot, cycle, taken, executor = published
    column = list(robot.model.joints.names).index(JOINT)
    home = robot.loop.written.position.copy()
    cycle(4)
    taken.clear()
    for k in range(1, 13):  # a ramp of 0.5 mrad per cycle (0.1 rad/s)
        robot.loop.stream([JOINT], [home[column] + 5e-4 * k])
        cycle()
    poll_until(lambda: spun(executor) and len(taken) >= 6, "six states' set-points", 10.0)
    times = np.array([seconds(msg) for msg in taken])
    assert np.allclose(np.diff(times), 1.0 / robot.settings.interface.publish_rate), times
    assert np.ptp([msg.position[column] for msg in taken]) >= 0.004  # it moved meanwhile


def drain(executor: SingleThreadedExecutor) -> None:
    """Take what has come (each spin takes one message at most)."""
    for _ in range(10):
        executor.spin_once(timeout_sec=0.005)


def spun(executor: SingleThreadedExecutor) -> bool:
    executor.spin_once(timeout_sec=0.01)
    return True
