"""A ``follow_joint_trajectory`` goal's cancel stops the robot where the request is taken, not at
the goal's next feedback poll (in process over real DDS, on the paced ideal driver): the stop
goes to the loop from the cancel's callback, in the order the node took the requests, so in
lockstep it reaches the loop before the answer the client sends after it (the same state in
every run). The feedback here comes every 5 s, far longer than the trajectory: a stop left to
that poll would let the trajectory run to its end."""

from __future__ import annotations

import numpy as np
from action_msgs.msg import GoalStatus
from paced_driver import PATIENCE, PacedIdealDriver, interface_running

from humanoid_control.ros import ActionClient, ResultWaiter, RobotClient, make_trajectory, poll_until
from humanoid_description import RobotModel
from humanoid_interfaces.action import FollowJointTrajectory

JOINT = "r_shoulder_pitch"
#: s and rad: the trajectory (one joint, moving throughout), and the share of it run before the cancel.
DURATION, TRAVEL = 3.0, 0.6
#: Control cycles that may still move the joint once the client has the cancel's answer (the
#: stop was handed to the loop before that answer went out; the loop takes it at its next cycle,
#: a loaded machine may delay its reading thread a few).
CYCLES_AFTER = 20


def wait(future, what: str):
    return RobotClient.wait_future(future, PATIENCE, what)


def test_a_cancel_stops_the_robot_where_it_is_taken_not_at_the_next_feedback():
    model = RobotModel("bioloid")
    driver = PacedIdealDriver(model.joints)  # keeps every command written to it
    index = model.joints.index(JOINT)
    with interface_running(driver, model, peers=("client",), feedback_rate=0.2) as running:
        client = ActionClient(running.peers["client"], FollowJointTrajectory, "follow_joint_trajectory")
        assert client.wait_for_server(timeout_sec=PATIENCE)
        start = float(driver.position[index])
        goal = FollowJointTrajectory.Goal(trajectory=make_trajectory([JOINT], [DURATION], [[start + TRAVEL]]))
        handle = wait(client.send_goal_async(goal), "goal response")
        assert handle.accepted
        poll_until(lambda: abs(driver.position[index] - start) >= 0.2 * TRAVEL, "the joint well under way", PATIENCE)
        answer = wait(handle.cancel_goal_async(), "cancel answer")
        assert len(answer.goals_canceling) == 1
        canceled_at = len(driver.written)
        waiter = ResultWaiter(handle)  # asks again if a result is lost
        assert waiter.wait(PATIENCE), "no result"
        result = waiter.response
        assert result.status == GoalStatus.STATUS_CANCELED, result.result.error_string
        # from the last set-point written before the answer came (the loop may have written none since)
        after = np.array([command.position[index] for command in list(driver.written.copy())[canceled_at - 1:]])
        moved = np.flatnonzero(np.abs(np.diff(after)) > 1e-12)
        assert moved.size == 0 or moved[-1] < CYCLES_AFTER, \
            f"the joint still moved {moved[-1] + 1} cycles after the cancel was answered"
        assert abs(after[-1] - start) < 0.9 * TRAVEL  # stopped on the way
