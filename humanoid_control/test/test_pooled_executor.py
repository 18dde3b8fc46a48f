"""PooledExecutor: callbacks run in its pool, each message once, and the thread that spins
waits, rather than spins, while a ready callback queues for a busy pool.

That last point is the reason the class exists: rclpy's MultiThreadedExecutor goes round
its wait set as fast as it can while a callback queues (measured: a full core for an idle
node on simulated time), which starves the rest of a 2-core machine. The spinning
thread's own CPU time while the pool is held busy tells the two apart: a busy loop
spends most of the wait computing, a wait spends next to nothing; so does the number of
callbacks the executor's wait hands out per message (one when it waits, tens when it
spins), which a busy machine does not blur.
"""

from __future__ import annotations

import ast
import inspect
import threading
import time

import pytest
import rclpy
import rclpy.executors
from builtin_interfaces.msg import Time
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import Executor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rosgraph_msgs.msg import Clock
from std_msgs.msg import Int32

from humanoid_control.ros import pooled_executor
from humanoid_control.ros.pooled_executor import PooledExecutor

#: s the pool's threads are held busy while other messages' callbacks queue.
HOLD = 1.0
THREADS = 2
MESSAGES = 5
#: the simulator's /clock rate the idle node runs under, Hz, and for how long, s
CLOCK_RATE = 200.0
CLOCK_SECONDS = 2.0


@pytest.fixture
def context():
    context = rclpy.Context()
    rclpy.init(context=context)
    yield context
    rclpy.try_shutdown(context=context)


def test_a_queued_callback_is_waited_for_not_spun_on_and_every_message_runs_once(context):
    node = Node("pooled_executor_test", context=context)
    received: list[int] = []
    release = threading.Event()
    pool_busy = threading.Barrier(THREADS + 1)

    def on_message(msg: Int32) -> None:
        received.append(msg.data)
        if msg.data < THREADS:  # each holds one of the pool's threads
            pool_busy.wait(10.0)
            release.wait(10.0)

    # reentrant: the next message's callback is handed to the pool while the first runs
    node.create_subscription(Int32, "pooled_executor_test", on_message, 10, callback_group=ReentrantCallbackGroup())
    publisher = node.create_publisher(Int32, "pooled_executor_test", 10)
    executor = PooledExecutor(num_threads=THREADS, context=context)
    executor.add_node(node)
    spin_cpu: list[float] = []  # the spinning thread's CPU time when the pool is full, at the end
    pool_full, stop = threading.Event(), threading.Event()

    def spin() -> None:
        while not stop.is_set():
            executor.spin_once(timeout_sec=0.05)
            if pool_full.is_set() and not spin_cpu:
                spin_cpu.append(time.thread_time())
        spin_cpu.append(time.thread_time())

    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        for k in range(THREADS):
            publisher.publish(Int32(data=k))
        pool_busy.wait(10.0)  # every pool thread runs a callback that waits for the release
        pool_full.set()
        for k in range(THREADS, MESSAGES):
            publisher.publish(Int32(data=k))
        time.sleep(HOLD)  # the pool stays busy this long whatever the executor does
        release.set()
        deadline = time.monotonic() + 10.0
        while len(received) < MESSAGES and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        stop.set()
        spinner.join(10.0)
        executor.shutdown(timeout_sec=1.0)
        node.destroy_node()
    assert sorted(received) == list(range(MESSAGES))  # every message once
    busy = spin_cpu[-1] - spin_cpu[0]
    assert busy < 0.2 * HOLD, f"the spinning thread used {busy:.3f} s of CPU in {HOLD:g} s of waiting"


class CountingExecutor(PooledExecutor):
    """Counts the callbacks its waits hand out (queued ones handed out again included)."""

    handed_out = 0

    def wait_for_ready_callbacks(self, *args, **kwargs):
        found = super().wait_for_ready_callbacks(*args, **kwargs)
        self.handed_out += 1
        return found


def test_an_idle_node_on_simulated_time_follows_its_clock_without_spinning_on_it(context):
    """The measured case: a node doing nothing but follow the simulator's /clock (use_sim_time)."""
    node = Node("idle_on_sim_time", context=context, parameter_overrides=[Parameter("use_sim_time", value=True)])
    source = Node("clock_source", context=context)
    publisher = source.create_publisher(Clock, "/clock", 10)
    executor = CountingExecutor(num_threads=THREADS, context=context)
    executor.add_node(node)
    spin_cpu: list[float] = []
    stop = threading.Event()

    def spin() -> None:
        spin_cpu.append(time.thread_time())
        while not stop.is_set():
            executor.spin_once(timeout_sec=0.05)
        spin_cpu.append(time.thread_time())

    spinner = threading.Thread(target=spin)
    spinner.start()
    ticks = round(CLOCK_RATE * CLOCK_SECONDS)
    last = Time(sec=ticks // round(CLOCK_RATE), nanosec=0)
    try:
        deadline = time.monotonic() + 10.0
        while publisher.get_subscription_count() == 0 and time.monotonic() < deadline:
            time.sleep(0.01)  # discovery of the node's /clock subscription
        started = time.monotonic()
        for k in range(1, ticks + 1):
            publisher.publish(Clock(clock=Time(sec=k // round(CLOCK_RATE),
                                               nanosec=(k % round(CLOCK_RATE)) * round(1e9 / CLOCK_RATE))))
            time.sleep(max(0.0, started + k / CLOCK_RATE - time.monotonic()))  # the publisher's pace
        deadline = time.monotonic() + 10.0
        while node.get_clock().now().nanoseconds < last.sec * 10**9 and time.monotonic() < deadline:
            time.sleep(0.01)
        followed = node.get_clock().now().nanoseconds
        wall = time.monotonic() - started
    finally:
        stop.set()
        spinner.join(10.0)
        executor.shutdown(timeout_sec=1.0)
        node.destroy_node()
        source.destroy_node()
    assert followed == last.sec * 10**9  # the node's clock followed /clock to its last tick
    per_message = executor.handed_out / ticks
    assert per_message < 3.0, f"{per_message:.1f} callbacks handed out per /clock message: a busy loop"
    busy = spin_cpu[-1] - spin_cpu[0]
    assert busy < 0.25 * wall, f"the spinning thread used {busy:.3f} s of CPU in {wall:.2f} s"


def test_spin_until_future_complete_returns_when_done_or_at_the_timeout(context):
    node = Node("pooled_executor_future", context=context)
    executor = PooledExecutor(num_threads=THREADS, context=context)
    executor.add_node(node)
    try:
        done = executor.create_future()
        node.create_timer(0.01, lambda: done.done() or done.set_result(True))
        executor.spin_until_future_complete(done, timeout_sec=10.0)
        assert done.result() is True
        never = executor.create_future()
        started = time.monotonic()
        executor.spin_until_future_complete(never, timeout_sec=0.2)
        assert not never.done() and time.monotonic() - started >= 0.2
    finally:
        executor.shutdown(timeout_sec=1.0)
        node.destroy_node()


def test_it_uses_and_overrides_nothing_private_of_rclpy_executors(context):
    """rclpy's private methods and attributes change between releases; its documented
    extension points (spin_once over wait_for_ready_callbacks) do not."""
    classes = [c for c in vars(rclpy.executors).values() if isinstance(c, type) and issubclass(c, Executor)]
    executor = Executor(context=context)
    rclpy_private = {name for name in set(vars(executor)).union(*map(dir, classes))
                     if name.startswith("_") and not name.startswith("__")}
    executor.shutdown()
    tree = ast.parse(inspect.getsource(pooled_executor))
    used = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    defined = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    assert PooledExecutor.__bases__ == (Executor,)
    assert (used | defined) & rclpy_private == set()
