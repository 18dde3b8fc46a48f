"""The fall manager's thread that waits for a get-up's result ends with its node.

A get-up's result is awaited in a thread of its own (the motion takes up to a minute). A
node destroyed while its process goes on (a container stopping its nodes, a test) used to
leave that thread asking its destroyed action client for ever, or raising rcl's
``InvalidHandle`` once it asked again. Here a ``play_motion`` server accepts the get-up and
never ends it; the fall manager's node is destroyed meanwhile."""

from __future__ import annotations

import threading

import rclpy
from rclpy.action import ActionServer
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.task import Future

from humanoid_control.nodes import FallManagerNode
from humanoid_control.ros import OwnProcess, destroy_whole, poll_until, topics
from humanoid_core.balance.fall_manager import NODE_NAME
from humanoid_interfaces.action import PlayMotion

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

    executor = SingleThreadedExecutor(context=context)
    spinning = threading.Event()
    spinning.set()
    spins = [0]  # spin_once calls ended

    def spin() -> None:
        while spinning.is_set() and context.ok():
            executor.spin_once(timeout_sec=0.05)
            spins[0] += 1

    spinner = threading.Thread(target=spin, name="test executor")
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
        # the executor's call under way may still hold the node's waitables (destroyed under it:
        # rclpy's InvalidHandle in its thread); the next call, begun after the removal, does not
        removed = spins[0]
        poll_until(lambda: spins[0] >= removed + 2, "the executor's wait without the node", 10.0)
        destroy_whole(node)  # as its container destroys it: its play_motion client with it
        poll_until(lambda: not waiting_threads(), "the get-up result thread ended", 10.0)
        assert not raised, [f"{args.thread.name}: {args.exc_type.__name__}: {args.exc_value}" for args in raised]
        executor.remove_node(server_node)
        destroy_whole(server_node)
    finally:
        spinning.clear()
        if spinner.is_alive():
            spinner.join(10.0)
        threading.excepthook = previous_hook
        rclpy.try_shutdown(context=context)
