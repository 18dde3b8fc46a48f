"""A robot's namespace: its validation (rcl's own rules), the frame prefix it gives, and
whether a robot already runs in it.

Every node, topic, service and action of one robot lives under its namespace (``/a``):
the stack's names are relative (:mod:`humanoid_control.ros.topics`), so the namespace a
node is started in places them. Two things are global by ROS convention and are handled
here: ``/tf`` (the frames carry the prefix instead: ``a/base_link``, as
robot_state_publisher's ``frame_prefix`` does) and ``/clock`` (each node of a namespaced
graph reads its own robot's ``/a/clock``: :meth:`humanoid_core.processes.NodeSpec.arguments`
remaps it).
"""

from __future__ import annotations

import argparse
import time

from humanoid_control.ros import topics

__all__ = ["ROOT_NAMESPACE", "add_namespace_option", "frame_prefix", "namespace_argument", "normalized_namespace",
           "prefixed", "robot_publishers", "unprefixed"]

#: The root namespace: no namespace.
ROOT_NAMESPACE = "/"
#: The longest name the stack puts under a namespace: a namespace it does not fit under is refused.
_LONGEST_NAME = f"{topics.STANDARD_FOLLOW_JOINT_TRAJECTORY}/_action/feedback"


def normalized_namespace(namespace: str) -> str:
    """``namespace`` as an absolute namespace (``a`` and ``/a`` are ``/a``; empty or ``/``: the
    root), checked by rcl's own rules (each token a name, no trailing ``/``, room for the
    stack's longest topic under it); ValueError saying what is wrong, in one line."""
    if namespace in ("", ROOT_NAMESPACE):  # argparse converts the option's default too: a graph's
        return ROOT_NAMESPACE  # command that is given none need not load rclpy to supervise it
    from rclpy.exceptions import InvalidNamespaceException, InvalidTopicNameException
    from rclpy.validate_full_topic_name import validate_full_topic_name
    from rclpy.validate_namespace import validate_namespace

    absolute = namespace if namespace.startswith("/") else f"/{namespace}"
    try:
        validate_namespace(absolute)
        if absolute != ROOT_NAMESPACE:
            validate_full_topic_name(f"{absolute}/{_LONGEST_NAME}")
    except (InvalidNamespaceException, InvalidTopicNameException) as error:
        reason = str(error).splitlines()[0].split(": ", 1)[-1].rstrip(":")
        raise ValueError(f"invalid namespace {namespace!r}: {reason}") from None
    return absolute


def namespace_argument(text: str) -> str:
    """An argparse type: a valid namespace, absolute (:func:`normalized_namespace`)."""
    try:
        return normalized_namespace(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


namespace_argument.__name__ = "namespace"  # argparse names the type in its messages

#: What ``--namespace`` means to a command that talks to a running robot.
CLIENT_HELP = ("the namespace of the robot to talk to (humanoid sim|real --namespace NAME): its topics, services "
               "and actions are under /NAME (default: none)")


def add_namespace_option(parser: argparse.ArgumentParser, help_text: str = CLIENT_HELP) -> None:
    """``--namespace NAME``: validated (:func:`namespace_argument`), absolute; ``/`` when not given."""
    parser.add_argument("--namespace", type=namespace_argument, default=ROOT_NAMESPACE, metavar="NAME",
                        help=help_text)


def frame_prefix(namespace: str) -> str:
    """The prefix of the frames of a robot in ``namespace`` (a node's ``get_namespace()``):
    ``a/`` under ``/a``, nothing in the root namespace."""
    inner = namespace.strip("/")
    return f"{inner}/" if inner else ""


def prefixed(prefix: str, frame: str) -> str:
    """``frame`` of the robot whose frames carry ``prefix`` (an empty frame stays empty; a
    frame already prefixed is left as it is)."""
    return frame if not frame or frame.startswith(prefix) else f"{prefix}{frame}"


def unprefixed(prefix: str, frame: str) -> str:
    """The robot's own name of ``frame`` (its URDF's, ``world``): ``frame`` without ``prefix``."""
    return frame.removeprefix(prefix) if prefix else frame


#: What rmw names a publisher's node by before its node's name is discovered.
UNKNOWN_NODE = "_NODE_NAME_UNKNOWN_"


def robot_publishers(namespace: str, wait: float) -> list[str]:
    """The nodes that publish ``joint_states`` in ``namespace`` (a robot is running there), as
    the graph shows them: what refuses a second robot into one namespace before anything is
    started. DDS has no moment at which discovery is complete, so the graph is watched until a
    publisher shows with its node's name, or ``wait`` seconds passed. It is watched to the end
    even when the nodes discovered stop changing: on a loaded machine the running robot's
    nodes came in bursts more than a second apart, and a watch that ended on a quiet second
    let a second robot into a taken namespace. A robot discovered later than ``wait`` is
    missed."""
    import rclpy
    from rclpy.node import Node

    topic = f"{namespace.rstrip('/')}/{topics.JOINT_STATES}"
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = Node("humanoid_namespace_probe", context=context, start_parameter_services=False,
                    enable_rosout=False)
        try:
            return _watch(node, topic, wait)
        finally:
            node.destroy_node()
    finally:
        rclpy.shutdown(context=context)


def _watch(node, topic: str, wait: float) -> list[str]:
    """:func:`robot_publishers`' look at the graph through ``node``."""
    deadline = time.monotonic() + wait
    while True:
        found = [f"{info.node_namespace.rstrip('/')}/{info.node_name}"
                 for info in node.get_publishers_info_by_topic(topic)]
        # a publisher is seen before its node's name (which DDS discovery brings later)
        if found and UNKNOWN_NODE not in "".join(found):
            return sorted(set(found))
        if time.monotonic() >= deadline:
            return sorted({name if UNKNOWN_NODE not in name else "a node not named yet" for name in found})
        time.sleep(0.05)
