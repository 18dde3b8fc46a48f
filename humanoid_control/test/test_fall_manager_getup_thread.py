"""The fall manager's thread that waits for a get-up's result: it ends with its node, and
what it decides is published as decided.

A get-up's result is awaited in a thread of its own (the motion takes up to a minute). A
node destroyed while its process goes on (a container stopping its nodes, a test) used to
leave that thread asking its destroyed action client for ever, or raising rcl's
``InvalidHandle`` once it asked again. Here a ``play_motion`` server accepts the get-up and
never ends it; the fall manager's node is destroyed meanwhile.

The get-up's end, decided on that thread, is followed within milliseconds by the executor's
decision that the robot is up (its trunk was upright before the motion ended). The state
used to be published after the lock was let go: the end went out with the cause and state
of "up", and a client waiting for the end never saw it (the emulated-bus fall-manager test,
once in a suite run)."""

from __future__ import annotations

import threading

import numpy as np
import rclpy
from node_teardown import SpinningThread
from rclpy.action import ActionServer
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.task import Future
from sensor_msgs.msg import Imu

from humanoid_control.nodes import FallManagerNode
from humanoid_control.ros import FALL_STATE_QOS, OwnProcess, destroy_whole, poll_until, to_time, topics
from humanoid_core.balance import State, TrunkReading
from humanoid_core.balance.fall_manager import NODE_NAME
from humanoid_interfaces.action import PlayMotion
from humanoid_interfaces.msg import FallManagerState

NAMESPACE = "fall_manager_getup_thread_test"
THREAD = "get-up result"


def waiting_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == THREAD]


def test_the_get_up_result_thread_ends_quietly_when_its_node_is_destroyed():
    context = rclpy.Context()
    rclpy.init(context=context)
    raised: list[threading.ExceptHookArgs] = []
    previous_hook, threading.excepthook = threading.excepthook, raised.append
    never = Future()
    accepted = threading.Event()

    async def execute(goal):  # the get-up plays for ever
        accepted.set()
        await never

    spinner = SpinningThread(SingleThreadedExecutor(context=context), name="test executor")
    executor = spinner.executor
    try:
        node = rclpy.create_node(NODE_NAME, namespace=NAMESPACE, context=context,
                                 parameter_overrides=[Parameter("robot", value="bioloid")])
        manager = FallManagerNode(node, OwnProcess())
        server_node = rclpy.create_node("trajectory_generator", namespace=NAMESPACE, context=context)
        ActionServer(server_node, PlayMotion, topics.PLAY_MOTION, execute_callback=execute)
        executor.add_node(node)
        executor.add_node(server_node)
        spinner.start()
        poll_until(manager._play.server_is_ready, "the play_motion server found", 30.0)
        manager._get_up("getup_back")
        poll_until(lambda: accepted.is_set() and waiting_threads(), "the get-up accepted and awaited", 30.0)

        executor.remove_node(node)
        # a turn under way may still hold the node's waitables (destroyed under it: rclpy's
        # InvalidHandle in its thread); the next one, begun after the removal, does not
        with spinner.between_turns():
            destroy_whole(node)  # as its container destroys it: its play_motion client with it
        poll_until(lambda: not waiting_threads(), "the get-up result thread ended", 10.0)
        assert not raised, [f"{args.thread.name}: {args.exc_type.__name__}: {args.exc_value}" for args in raised]
        executor.remove_node(server_node)
        with spinner.between_turns():
            destroy_whole(server_node)
    finally:
        spinner.stop()
        threading.excepthook = previous_hook
        rclpy.try_shutdown(context=context)


class LetInOnRelease:
    """The node's lock, which lets one more decision in the moment it is let go, as the
    executor's thread may between the get-up thread's decision and what that thread does
    next."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.next_in: list = []

    def __enter__(self) -> None:
        self._lock.acquire()

    def __exit__(self, *_exc: object) -> None:
        self._lock.release()
        if self.next_in:
            self.next_in.pop()()


def test_the_end_of_a_get_up_is_published_as_decided_when_up_follows_at_once():
    context = rclpy.Context()
    rclpy.init(context=context)
    executor = SingleThreadedExecutor(context=context)
    made: list = []
    try:
        node = rclpy.create_node(NODE_NAME, namespace=NAMESPACE, context=context,
                                 parameter_overrides=[Parameter("robot", value="bioloid"),
                                                      Parameter("auto_getup", value=True)])
        made.append(node)
        fall_manager = FallManagerNode(node, OwnProcess())
        listener = rclpy.create_node("listener", namespace=NAMESPACE, context=context)
        made.append(listener)
        states: list[FallManagerState] = []
        listener.create_subscription(FallManagerState, topics.FALL_MANAGER_STATE, states.append,
                                     FALL_STATE_QOS)
        # lying still on the belly, then upright while the get-up plays (readings of the past:
        # each decided at its own stamp)
        manager, now = fall_manager.manager, fall_manager._now()
        lying = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])  # pitched 90 deg forward
        for k in range(200):
            t = now - 2.0 + 0.01 * k
            manager.trunk(TrunkReading.of(t, lying if k < 100 else np.eye(3), np.zeros(3)), t)
        assert manager.state is State.GETTING_UP and manager.getting_up_motion == "getup_belly", manager.cause

        def upright_reading() -> None:  # the executor's thread: the IMU says upright
            imu = Imu()
            imu.header.stamp = to_time(fall_manager._now())
            imu.orientation.w = 1.0
            fall_manager._on_imu(imu)

        fall_manager._lock = LetInOnRelease()
        fall_manager._lock.next_in.append(upright_reading)
        ended = PlayMotion.Result(error_code=PlayMotion.Result.SUCCESSFUL)
        fall_manager._on_getup_result(PlayMotion.Impl.GetResultService.Response(result=ended))
        assert manager.state is State.CONTROLLABLE, manager.cause

        executor.add_node(listener)
        poll_until(lambda: executor.spin_once(timeout_sec=0.05) or len(states) >= 2, "both states", 10.0)
        said = [(m.state, m.cause) for m in states]
        assert said[0][0] == FallManagerState.GETTING_UP and "getup_belly ended (attempt 1" in said[0][1], said
        assert said[1][0] == FallManagerState.CONTROLLABLE and "up after get-up attempt 1" in said[1][1], said
        assert len(said) == 2, said
    finally:
        executor.shutdown()
        for made_node in made:
            destroy_whole(made_node)
        rclpy.try_shutdown(context=context)
