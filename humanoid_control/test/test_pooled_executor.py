"""PooledExecutor: callbacks run in its pool, each message once, and the thread that spins
waits, rather than spins, while a ready callback queues for a busy pool.

That last point is the reason the class exists: rclpy's MultiThreadedExecutor goes round
its wait set as fast as it can while a callback queues (measured: a full core for an idle
node on simulated time), which starves the rest of a 2-core machine. The spinning
thread's own CPU time while the pool is held busy tells the two apart: a busy loop
spends most of the wait computing, a wait spends next to nothing.
"""

from __future__ import annotations

import threading
import time

import pytest
import rclpy
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from std_msgs.msg import Int32

from humanoid_control.ros.pooled_executor import PooledExecutor

#: s the pool's threads are held busy while other messages' callbacks queue.
HOLD = 1.0
THREADS = 2
MESSAGES = 5


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
