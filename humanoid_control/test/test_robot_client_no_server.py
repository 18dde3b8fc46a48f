"""A follow_joint_trajectory server that never becomes ready is reported with what the
graph lists of it.

"No follow_joint_trajectory server within 30 s", said to a client that was taking the same
node's joint_states and diagnostics, could not tell discovery in progress (part of the
action's services listed) from a server that is not there, nor a server listed several times
(a node left running by someone else) from one. Here only the action's send_goal service and
status topic exist: the client waits in vain, and its error counts what the graph shows,
service by service, and names the node hosting it.
"""

from __future__ import annotations

import pytest
from action_msgs.msg import GoalStatusArray
from rclpy.node import Node

from humanoid_control.ros import RobotClient, RobotClientError, poll_until
from humanoid_interfaces.action import FollowJointTrajectory

NAMESPACE = "robot_client_no_server_test"


def test_a_server_listed_in_part_is_named_service_by_service():
    client = RobotClient("no_server_client", namespace=NAMESPACE)
    half = Node("half_a_server", namespace=NAMESPACE)
    try:
        half.create_service(FollowJointTrajectory.Impl.SendGoalService, "follow_joint_trajectory/_action/send_goal",
                            lambda request, response: response)
        half.create_publisher(GoalStatusArray, "follow_joint_trajectory/_action/status", 1)
        full = f"/{NAMESPACE}/follow_joint_trajectory/_action/send_goal"
        status = f"/{NAMESPACE}/follow_joint_trajectory/_action/status"
        poll_until(lambda: client.node.count_services(full) == 1 and client.node.count_publishers(status) == 1,
                   "the send_goal service and the status topic listed", 30.0)
        with pytest.raises(RobotClientError) as error:
            client.wait_for_server(timeout=0.5)
        assert str(error.value) == (
            f"no follow_joint_trajectory server within 0.5 s; the graph lists for /{NAMESPACE}/follow_joint_trajectory:"
            " servers of send_goal 1, cancel_goal 0, get_result 0; publishers of feedback 0, status 1;"
            f" hosted by /{NAMESPACE}/half_a_server")
    finally:
        half.destroy_node()
        client.close()
