"""The standard trajectory action (issue 39 item 4): control_msgs/FollowJointTrajectory, the
type MoveIt and rqt_joint_trajectory_controller send, served by the robot interface beside its
own under the name ros2_control's joint trajectory controller uses. A client that knows only
the standard type's name has its goals accepted, executed and refused as ours are (the same
code and text); what it adds (multi-DOF joints) is refused in one line.

Where no ROS installation provides control_msgs, the stack builds a stand-in
(``control_msgs_standin``) with the standard field lists; its type hashes must be the real
package's. The expected hashes below were computed once by building control_msgs 6.8.0's own
definitions (ros-controls/control_msgs, the Kilted release: FollowJointTrajectory.action,
JointTolerance.msg, JointComponentTolerance.msg, unchanged) with this project's rosidl, and
they were the stand-in's too.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from action_msgs.msg import GoalStatus
from control_msgs.action import FollowJointTrajectory as Standard

from humanoid_control.ros import make_trajectory, standard_result, to_duration, topics, wait_until_answering
from humanoid_core.loop import ErrorCode
from humanoid_description import load_model
from humanoid_interfaces.action import FollowJointTrajectory
from humanoid_sim import sim_nodes

ROBOT = "bioloid"
GRAPH = sim_nodes(ROBOT)
PATIENCE = 60.0
#: control_msgs 6.8.0 (Kilted), as built from its own files.
STANDARD_HASHES = {
    "control_msgs/action/FollowJointTrajectory":
        "RIHS01_ff29901b2693f5deb847e96084a1c2cdb26e70b7c847be21859b70a55fb29cf0",
    "control_msgs/action/FollowJointTrajectory_Goal":
        "RIHS01_8a9060704b269608f5a340934cc26e66869dd14bdac29e2e7fd9ec8b9882d205",
    "control_msgs/action/FollowJointTrajectory_Result":
        "RIHS01_8002e99ed2c14c6faa522f2a93c26d744c5982f254f9e98ff9c6f19789bdb220",
    "control_msgs/action/FollowJointTrajectory_Feedback":
        "RIHS01_0bb018d181bdc6384dd75365480967bd1d6eaee4ef3dd597c64cd0b8bdc10867",
    "control_msgs/msg/JointTolerance":
        "RIHS01_c254f9cece0f3b733017b6990fd46d1326e25242d6b8844398c97d9a88e7d648",
    "control_msgs/msg/JointComponentTolerance":
        "RIHS01_739ea7566931944d33830fa10f1bf5e7a7fbdc3172bce7a7eaac642bd6e3ffa4",
}


def test_the_stand_in_has_the_standard_type_hashes():
    from ament_index_python.packages import get_package_share_directory

    share = Path(get_package_share_directory("control_msgs"))
    found = {}
    for path in ("action/FollowJointTrajectory.json", "msg/JointTolerance.json", "msg/JointComponentTolerance.json"):
        for entry in json.loads((share / path).read_text())["type_hashes"]:
            found[entry["type_name"]] = entry["hash_string"]
    assert {name: found.get(name) for name in STANDARD_HASHES} == STANDARD_HASHES


def test_our_codes_map_to_the_standard_ones():
    for code in (ErrorCode.SUCCESSFUL, ErrorCode.INVALID_GOAL, ErrorCode.INVALID_JOINTS,
                 ErrorCode.OLD_HEADER_TIMESTAMP, ErrorCode.PATH_TOLERANCE_VIOLATED, ErrorCode.GOAL_TOLERANCE_VIOLATED):
        result = standard_result(code, "why")
        assert (result.error_code, result.error_string) == (int(code), "why")
        assert getattr(Standard.Result, code.name) == int(code)  # the same six codes by name
    for code in (ErrorCode.PREEMPTED, ErrorCode.CANCELED, ErrorCode.DRIVER_FAILURE, ErrorCode.SELF_COLLISION):
        result = standard_result(code, "why")
        assert (result.error_code, result.error_string) == (Standard.Result.INVALID_GOAL, f"{code.name}: why")


@pytest.fixture(scope="module")
def standard(module_graph):
    """The module graph's client and its client of the standard action (answering)."""
    action = module_graph.action_client(Standard, topics.STANDARD_FOLLOW_JOINT_TRAJECTORY)
    assert action.wait_for_server(timeout_sec=PATIENCE)
    assert wait_until_answering(action, PATIENCE)
    return module_graph, action


def send(client, action, trajectory, feedback: list | None = None, **goal_fields):
    """A standard goal with ``trajectory``; its (status, error_code, error_string)."""
    goal = Standard.Goal(trajectory=trajectory, goal_time_tolerance=to_duration(0.5), **goal_fields)
    callback = None if feedback is None else (lambda msg: feedback.append(msg.feedback))
    handle = client.wait_future(action.send_goal_async(goal, feedback_callback=callback), PATIENCE, "goal response")
    assert handle.accepted  # every goal is accepted and judged in execute, as on our action
    answer = client.wait_result(handle, PATIENCE)
    return answer.status, answer.result.error_code, answer.result.error_string


def ours(client, trajectory):
    outcome = client.result(client.send_goal(trajectory, goal_time_tolerance=0.5, timeout=PATIENCE), PATIENCE)
    return outcome.status, outcome.error_code, outcome.error_string


def test_a_standard_goal_is_executed_with_standard_feedback(standard):
    client, action = standard
    model = load_model(ROBOT)
    now = client.current_positions(PATIENCE)
    joint = "r_elbow"
    lower, upper = model.joints.lower[model.joints.index(joint)], model.joints.upper[model.joints.index(joint)]
    target = float(np.clip(now[joint] + 0.3, lower + 0.05, upper - 0.05))
    middle = (now[joint] + target) / 2.0
    trajectory = make_trajectory([joint], [0.5, 1.0], [[middle], [target]])
    feedback: list = []
    assert send(client, action, trajectory, feedback) == (GoalStatus.STATUS_SUCCEEDED, Standard.Result.SUCCESSFUL, "")
    assert abs(client.current_positions(PATIENCE)[joint] - target) < 0.03
    assert feedback and all(list(f.joint_names) == [joint] for f in feedback)
    assert {f.index for f in feedback} <= {0, 1} and feedback[-1].index == 1


@pytest.mark.parametrize("case", ["beyond its limit", "unknown joint"])
def test_a_bad_goal_is_refused_as_on_our_action(standard, case):
    client, action = standard
    model = load_model(ROBOT)
    if case == "unknown joint":
        trajectory = make_trajectory(["no_such_joint"], [1.0], [[0.0]])
    else:
        trajectory = make_trajectory(["r_elbow"], [1.0], [[model.joints.upper[model.joints.index("r_elbow")] + 0.5]])
    before = client.current_positions(PATIENCE)
    status, code, text = send(client, action, trajectory)
    assert status == GoalStatus.STATUS_ABORTED and code != Standard.Result.SUCCESSFUL and text
    assert (status, code, text) == ours(client, trajectory)
    expected = FollowJointTrajectory.Result.INVALID_JOINTS if case == "unknown joint" else \
        FollowJointTrajectory.Result.INVALID_GOAL
    assert code == expected, text
    after = client.current_positions(PATIENCE)
    assert max(abs(after[name] - before[name]) for name in before) < 0.01


def test_a_multi_dof_goal_is_refused_in_one_line(standard):
    client, action = standard
    trajectory = make_trajectory(["r_elbow"], [1.0], [[client.current_positions(PATIENCE)["r_elbow"]]])
    goal = Standard.Goal().multi_dof_trajectory
    goal.joint_names = ["floating_base"]
    status, code, text = send(client, action, trajectory, multi_dof_trajectory=goal)
    assert (status, code) == (GoalStatus.STATUS_ABORTED, Standard.Result.INVALID_GOAL)
    assert text.startswith("multi_dof_trajectory is not supported") and "\n" not in text
