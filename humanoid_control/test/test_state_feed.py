"""The container's state feed keeps each node's depth of queue (over real DDS, the container's
executor): when states wait, a node that asked for the latest state gets the newest only, one
that asked for ten the newest ten, the recorder every one, each in order; and the states the
feed took at once leave the executor no event to run for them.

A process that falls behind its robot (a loaded machine) used to hand every waiting state to
every node, one executor event at a time: the executor, which runs events in the order they
came, then ran a walk goal's start 43 s late while the walk it had accepted went on
(``humanoid bench lockstep`` at real time beside a test suite)."""

from __future__ import annotations

import threading

import pytest
import rclpy
from rclpy.experimental import EventsExecutor
from rclpy.qos import QoSProfile
from rclpy.task import Future
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import String

from humanoid_control.ros import FEED_QOS, StateFeed, poll_until, robot_state, spin_while
from humanoid_interfaces.msg import RobotState

#: Generous limit (s) for anything awaited; each wait ends as soon as its condition holds.
PATIENCE = 30.0
WAITING = 50  # states published while the feed's first callback is held


def state(n: int) -> RobotState:
    msg = RobotState()
    msg.header.stamp.sec = n
    msg.joint_states = JointState(name=["a"], position=[float(n)])
    msg.joint_states.header.stamp.sec = n
    return msg


@pytest.fixture
def container():
    """A node spun by rclpy's EventsExecutor in a thread, as the container spins its nodes, and
    a second node to publish from."""
    rclpy.init()
    feed_node, outside = rclpy.create_node("state_feed_under_test"), rclpy.create_node("state_feed_publisher")
    executor = EventsExecutor()
    executor.add_node(feed_node)
    ended = Future()
    spinner = threading.Thread(target=spin_while, args=(executor, lambda: not ended.done(), ended), daemon=True)
    try:
        yield feed_node, outside, spinner
    finally:
        ended.set_result(None)
        spinner.join(timeout=10.0)
        executor.shutdown()
        feed_node.destroy_node()
        outside.destroy_node()
        rclpy.try_shutdown()


def test_waiting_states_go_to_each_node_up_to_its_depth_newest_last(container):
    feed_node, outside, spinner = container
    feed = StateFeed(feed_node)
    held, release = threading.Event(), threading.Event()
    taken: dict[str, list[int]] = {"latest": [], "ten": [], "recorder": []}
    order: list[str] = []

    def taker(name: str):
        def callback(msg) -> None:
            stamp = msg.header.stamp.sec
            if not held.is_set():  # the first state: hold the executor while the others come
                held.set()
                assert release.wait(PATIENCE)
            taken[name].append(stamp)
            order.append(name)
        return callback

    feed.subscribe(robot_state.TOPIC, taker("recorder"), "recorder", 1000)
    feed.subscribe(robot_state.JOINT_STATES, taker("latest"), "walk_controller", QoSProfile(depth=1))
    feed.subscribe(robot_state.JOINT_STATES, taker("ten"), "self_collision_checker", 10)
    after: list[int] = []
    feed_node.create_subscription(String, "state_feed_test/after", lambda _msg: after.append(len(order)), 10)
    spinner.start()

    states = outside.create_publisher(RobotState, robot_state.TOPIC, FEED_QOS)
    other = outside.create_publisher(String, "state_feed_test/after", 10)
    poll_until(lambda: states.get_subscription_count() >= 1 and other.get_subscription_count() >= 1,
               "the feed and the other subscription matched", PATIENCE)
    states.publish(state(0))
    assert held.wait(PATIENCE), "the feed handed out no state"
    for n in range(1, WAITING + 1):
        states.publish(state(n))
    assert states.wait_for_all_acked(rclpy.duration.Duration(seconds=PATIENCE)), "the feed did not take the states"
    other.publish(String(data="after the states"))
    assert other.wait_for_all_acked(rclpy.duration.Duration(seconds=PATIENCE))
    release.set()
    poll_until(lambda: after, "the message sent after the states", PATIENCE)

    assert taken["recorder"] == list(range(WAITING + 1))
    assert taken["latest"] == [0, WAITING]
    assert taken["ten"] == [0, *range(WAITING - 9, WAITING + 1)]
    # the message that came after the states was handled after them, once every state was out
    assert after == [len(order)] and len(order) == (WAITING + 1) + 2 + 11


def test_nodes_that_command_the_robot_take_each_state_before_the_watchers(container):
    """A watcher (a monitor, the recorder) takes a state after the nodes that command the
    robot, whatever the order they subscribed in, so that their commands and the lockstep
    answer go out first; each node still gets its parts in the driver's order, and every node
    a state before any node the next."""
    feed_node, outside, spinner = container
    feed = StateFeed(feed_node)
    order: list[tuple[int, str, str]] = []

    def taker(name: str, topic: str):
        return lambda msg: order.append((msg.header.stamp.sec, name, topic))

    feed.subscribe(robot_state.TOPIC, taker("recorder", "robot_state"), "recorder", 1000, watcher=True)
    feed.subscribe(robot_state.IMU, taker("monitor", "imu"), "balance_monitor", 100, watcher=True)
    feed.subscribe(robot_state.JOINT_STATES, taker("monitor", "joint_states"), "balance_monitor", 100, watcher=True)
    feed.subscribe(robot_state.IMU, taker("walk", "imu"), "walk_controller", 100)
    feed.subscribe(robot_state.JOINT_STATES, taker("walk", "joint_states"), "walk_controller", 100)
    spinner.start()

    states = outside.create_publisher(RobotState, robot_state.TOPIC, FEED_QOS)
    poll_until(lambda: states.get_subscription_count() >= 1, "the feed matched", PATIENCE)
    for n in range(3):
        msg = state(n)
        msg.imu = [Imu()]
        msg.imu[0].header.stamp.sec = n
        states.publish(msg)
    poll_until(lambda: len(order) == 3 * 5, "three states handed out", PATIENCE)
    each_state = [("walk", "imu"), ("walk", "joint_states"), ("recorder", "robot_state"), ("monitor", "imu"),
                  ("monitor", "joint_states")]
    assert order == [(n, name, topic) for n in range(3) for name, topic in each_state]
