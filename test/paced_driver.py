"""Test support for the robot interface in process: :class:`~humanoid_core.loop.IdealDriver`
paced like hardware, and the interface running on it over real DDS (:func:`interface_running`)."""

from __future__ import annotations

import contextlib
import itertools
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass

from node_teardown import SpinningThread, destroy_whole

from humanoid_core.loop import IdealDriver

#: s: generous bound on anything the in-process interface is waited for.
PATIENCE = 30.0
_NAMESPACES = itertools.count(1)


class PacedIdealDriver(IdealDriver):
    """The ideal robot on a monotonic clock, one cycle per period of wall time (like hardware)."""

    def __init__(self, joints) -> None:
        super().__init__(joints, start_time=time.monotonic())
        self._next = time.monotonic()

    def sync(self, period: float) -> None:
        self._next += period
        time.sleep(max(0.0, self._next - time.monotonic()))
        super().sync(period)
        self.time = time.monotonic()


@dataclass
class RunningInterface:
    """What :func:`interface_running` yields."""

    node: object  # the interface's node
    peers: dict[str, object]  # the other nodes, by name, spun by the same executor
    interface: object  # humanoid_control.ros.RobotInterface
    loop: object  # humanoid_control.ros.LoopThread: the control loop (``loop.host.loop``) in this process
    spinner: SpinningThread  # spins the nodes: destroy their entities between its turns


@contextlib.contextmanager
def interface_running(driver: IdealDriver, model, peers: tuple[str, ...] = (),
                      **parameters: float) -> Iterator[RunningInterface]:
    """The robot interface on ``driver`` in this process (its loop in a thread; control 100 Hz,
    joint_states 50 Hz and ``parameters`` of the interface, driver time not ROS time) and nodes
    named ``peers`` beside it, all spun by one multi-threaded executor over real DDS; everything
    is closed at the end. All in a namespace of their own: a node of an earlier test in this
    process's domain (a graph still stopping) subscribing to ``imu/data`` or publishing
    ``fall_manager_state`` is no peer of this interface (seen: the IMU read five times where
    nobody of the test listened)."""
    import rclpy
    from rclpy.executors import MultiThreadedExecutor

    from humanoid_control.ros import LoopThread, RobotInterface
    from humanoid_core.loop import InterfaceParameters

    namespace = f"/paced_interface_{os.getpid()}_{next(_NAMESPACES)}"
    rclpy.init()
    node = rclpy.create_node("robot_interface_under_test", namespace=namespace)
    others = {name: rclpy.create_node(name, namespace=namespace) for name in peers}
    params = InterfaceParameters(**{"control_rate": 100.0, "publish_rate": 50.0, **parameters})
    loop = LoopThread(node, driver, model, params)
    interface = RobotInterface(node, loop.client, model, params, clock_is_ros_time=False)
    executor = MultiThreadedExecutor()
    for each in (node, *others.values()):
        executor.add_node(each)
    spinner = SpinningThread(executor)
    loop.start()
    try:
        assert interface.start(timeout=PATIENCE) is not None
        spinner.start()
        yield RunningInterface(node, others, interface, loop, spinner)
    finally:
        interface.stop()
        loop.stop()
        spinner.stop()
        for each in (node, *others.values()):
            destroy_whole(each)
        rclpy.try_shutdown()
