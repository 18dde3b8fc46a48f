"""The robot's state in one message: ``robot_state`` (humanoid_interfaces/RobotState).

A driver node publishes, per state, ``joint_states``, the IMU, each foot's wrench and
contact and, in simulation, the ground truth and the fall flag: up to ten messages, each
waking every process that takes it (0.15-0.3 ms of CPU per wake-up on these machines:
docs/graph_cost.md). The stack's own nodes take one ``robot_state`` per state instead,
which carries the same standard messages; the standard topics are still published, to
whoever subscribes to them (a user's controller, RViz, ``ros2 bag``), with the same contents.

This module is the one place that says which topic each part stands for: the driver's
publisher fills it (:mod:`humanoid_control.ros.state_publisher`), the nodes' hosts hand its
parts to the callbacks of those topics (:mod:`humanoid_control.ros.state_feed`), the
recorder writes its parts as those topics.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from humanoid_control.ros import topics
from humanoid_interfaces.msg import RobotState

__all__ = ["BASE_POSE", "BASE_TWIST", "FALLEN", "IMU", "JOINT_SETPOINTS", "JOINT_STATES", "TOPIC", "RobotState",
           "carries",
           "foot_contact_topic", "foot_wrench_topic", "parts",
           "type_name"]

#: The topic of the one-message state (relative: it follows the robot's namespace).
TOPIC = topics.ROBOT_STATE
JOINT_STATES = topics.JOINT_STATES
#: What the robot interface wrote to its driver at each state (sensor_msgs/JointState).
JOINT_SETPOINTS = topics.JOINT_SETPOINTS
IMU = topics.IMU
BASE_POSE = topics.BASE_POSE
BASE_TWIST = topics.BASE_TWIST
FALLEN = topics.FALLEN
foot_wrench_topic = topics.foot_wrench
foot_contact_topic = topics.foot_contact


def carries(topic: str) -> bool:
    """Whether a ``robot_state`` message may carry ``topic`` (relative or absolute name)."""
    name = topic.lstrip("/")
    if name in (JOINT_STATES, JOINT_SETPOINTS, IMU, BASE_POSE, BASE_TWIST, FALLEN):
        return True
    side, _, rest = name.partition("_foot/")
    return bool(side) and "/" not in side and rest in ("wrench", "contact")


def type_name(part: Any) -> str:
    """The ROS type name of a part (``sensor_msgs/msg/JointState``)."""
    package = type(part).__module__.split(".")[0]
    return f"{package}/msg/{type(part).__name__}"


def parts(msg: RobotState) -> Iterator[tuple[str, Any]]:
    """The standard messages ``msg`` carries, as (relative topic, message), in the order the
    driver publishes them: ground truth and fall flag, IMU, set-points, feet, and
    ``joint_states`` last, so that a node answering a joint state has the other parts of its
    instant."""
    for topic, items in ((BASE_POSE, msg.base_pose), (BASE_TWIST, msg.base_twist), (FALLEN, msg.fallen),
                         (IMU, msg.imu), (JOINT_SETPOINTS, msg.setpoints)):
        for item in items:
            yield topic, item
    for side, wrench, contact in zip(msg.foot_sides, msg.foot_wrenches, msg.foot_contacts, strict=False):
        yield foot_wrench_topic(side), wrench
        yield foot_contact_topic(side), contact
    yield JOINT_STATES, msg.joint_states
