"""Walking in simulation: the walk controller node in its graph, driven as a user would.

Short subsets of issue 15's walks (the long ones, and the speeds, are ``humanoid walk``):
the Bioloid walks a few steps forward through the ``walk`` action and stays up, as
measured by the simulator's ground truth (:func:`humanoid_experiments.walk.walk`:
the centre of the soles before and after, the simulator's ``fallen``); ``cmd_vel``
walks it and a zero velocity stops it standing. Walk goals beyond the controller's bounds
(1e308 m, 1e9 m sideways) or not finite are refused at once, and the robot stays.

The simulation runs in lockstep with the walk controller and the test's client: the walk
is a closed loop between processes (the controller sends its set-points ahead of the
robot's clock as short trajectories), and in lockstep the simulation waits for the
controller's answer to each state, so it runs as fast as the machine allows and a loaded
machine slows it instead of leaving the controller behind.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from geometry_msgs.msg import Twist
from trajectory_msgs.msg import JointTrajectory

from conftest import MODULE_CLIENT
from humanoid_control.ros import poll_until, seconds, wait_until_answering
from humanoid_core.biped_walking import WalkParameters
from humanoid_experiments.walk import walk
from humanoid_interfaces.action import Walk
from humanoid_sim import sim_nodes

pytestmark = pytest.mark.system

#: Drift allowed per metre walked (issue 15: 5 cm per metre).
DRIFT_PER_METRE = 0.05


#: One Bioloid graph for the module's walks (each starts where the previous one stood), in
#: lockstep with its client.
LOCKSTEP = True
GRAPH = sim_nodes("bioloid", lockstep=True,
                  participants=(MODULE_CLIENT,))


@pytest.fixture(scope="module")
def bioloid(module_graph):
    return module_graph


def test_bioloid_walks_a_few_steps_forward_and_stays_up(bioloid):
    standing = bioloid.wait_for_base_pose().pose.position.z
    report = walk(bioloid, "bioloid", 0.2, timeout=300.0)
    assert report.error_code == 0, report.result
    assert not report.fell, report.text()
    assert report.steps >= 5, report.text()
    # the soles' centre overshoots the footstep plan by a few centimetres (the feet slip
    # forward: +17 mm over 0.3 m and +24 mm over 0.5 m measured by humanoid walk)
    assert report.distance_m == pytest.approx(0.2, abs=0.04), report.text()
    assert abs(report.lateral_drift_m) <= DRIFT_PER_METRE * report.distance_m + 0.005, report.text()
    assert abs(math.degrees(report.heading_error_rad)) <= 5.0, report.text()
    # still up a second later: not fallen, the base at the walking height (crouched, not lying)
    bioloid.wait_until(bioloid.now() + 1.0, timeout=60.0)
    assert not bioloid.fallen
    assert bioloid.wait_for_base_pose().pose.position.z > 0.8 * standing


class TrajectoryWatch:
    """joint_trajectory as the walk controller sends it (robot time of arrival, message)."""

    def __init__(self, client) -> None:
        self.client = client
        self.messages: list[tuple[float, JointTrajectory]] = []
        client.node.create_subscription(JointTrajectory, "joint_trajectory",
                                        lambda msg: self.messages.append((client.now(), msg)), 100)


def drive(client, twist: Twist, robot_seconds: float) -> None:
    """Publish cmd_vel at 10 Hz of robot time for this long."""
    publisher = client.node.create_publisher(Twist, "cmd_vel", 10)
    end = client.now() + robot_seconds
    while client.now() < end:
        publisher.publish(twist)
        client.wait_until(min(end, client.now() + 0.1), timeout=60.0)


def test_cmd_vel_walks_and_a_zero_velocity_stops_the_robot_standing(bioloid):
    watch = TrajectoryWatch(bioloid)
    start = bioloid.wait_for_base_pose().pose.position
    forward = Twist()
    forward.linear.x = 0.05
    drive(bioloid, forward, 5.0)  # 1.5 s of crouching into the walking posture, the start, then steps
    assert len(watch.messages) >= 10  # set-points sent ahead, a stream of trajectories
    drive(bioloid, Twist(), 0.3)  # stop
    # the controller ends the walk (the step under way, then both feet down) and sends no more
    poll_until(lambda: bioloid.now() - watch.messages[-1][0] > 1.5, "the walk controller to stop sending",
               timeout=120.0)
    count = len(watch.messages)
    last = watch.messages[-1][1]
    assert all(v == 0.0 for v in last.points[-1].velocities), [  # it ends at rest
        (round(t, 3), round(seconds(m.header.stamp), 3), len(m.points),
         round(seconds(m.header.stamp) + seconds(m.points[-1].time_from_start), 3),
         round(max(abs(v) for v in m.points[-1].velocities), 4)) for t, m in watch.messages[-8:]]
    bioloid.wait_until(seconds(last.header.stamp) + seconds(last.points[-1].time_from_start) + 0.5, timeout=60.0)
    rest = bioloid.record(0.5)
    assert len(watch.messages) == count  # standing: nothing more is sent
    assert not bioloid.fallen
    positions = np.array([m.position for m in rest])
    assert np.ptp(positions, axis=0).max() < 0.01  # at rest
    end = bioloid.base_pose.pose.position
    assert end.x - start.x > 0.05  # it walked forward



def test_walk_goals_beyond_the_bounds_or_not_finite_are_refused_at_once_and_the_robot_stays(bioloid):
    params = WalkParameters.for_robot("bioloid")
    action = bioloid.action_client(Walk, "walk")
    assert action.wait_for_server(timeout_sec=60.0) and wait_until_answering(action, 60.0)
    watch = TrajectoryWatch(bioloid)
    cases = [((1e308, 0.0, 0.0), f"distance 1e+308 m is beyond max_goal_distance = {params.max_goal_distance:g} m"),
             ((0.0, -1e9, 0.0), f"lateral -1e+09 m is beyond max_goal_lateral = {params.max_goal_lateral:g} m"),
             ((math.nan, 0.0, 0.0), "non-finite"), ((0.0, 0.0, math.inf), "non-finite"),
             ((0.0, 0.0, 4.0), "turn 4 rad is beyond +-pi")]
    for (distance, lateral, turn), words in cases:
        goal = Walk.Goal(distance=distance, lateral=lateral, turn=turn)
        handle = bioloid.wait_future(action.send_goal_async(goal), 60.0, "walk goal response")
        result = bioloid.wait_result(handle, 60.0, "walk result").result
        assert result.error_code == Walk.Result.INVALID_GOAL and words in result.error_string, result.error_string
    assert not watch.messages  # nothing was sent to the robot
