"""RobotClient's simulator services when an answer does not come: an idempotent request (a
reset) is sent again and the first answer counts; a request that would act twice (a step of
some cycles) is not, and the caller is told no answer came. The server here is a real rclpy
service over DDS that leaves its first request unanswered (as a loaded server's answer is
lost before it has discovered the client: docs/ros_and_dds.md, "Service answers")."""

from __future__ import annotations

import threading

import pytest
import rclpy
from node_teardown import SpinningThread
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor

from humanoid_control.ros import RobotClient, RobotClientError, robot_client, topics
from humanoid_interfaces.srv import ResetSimulation, StepSimulation

NAMESPACE = "service_again_test"
#: s between two sendings in these tests (the client's own default is longer than the
#: server's wait for a reader).
AGAIN = 0.5


class FirstUnanswered:
    """A service that holds its first request until :meth:`release`, and answers the others."""

    def __init__(self, node, kind, name: str) -> None:
        self.requests = 0
        self._release = threading.Event()
        self._lock = threading.Lock()
        node.create_service(kind, name, self._serve, callback_group=ReentrantCallbackGroup())

    def _serve(self, _request, response):
        with self._lock:
            self.requests += 1
            first = self.requests == 1
        if first:
            self._release.wait()
        response.success = True
        response.message = "first" if first else f"answer to request {self.requests}"
        return response

    def release(self) -> None:
        self._release.set()


@pytest.fixture
def server(monkeypatch):
    """A client (which starts rclpy) and a server node spun in threads of its own."""
    monkeypatch.setattr(robot_client, "ASK_AGAIN_AFTER", AGAIN)
    with RobotClient("service_again_client", namespace=NAMESPACE) as client:
        node = rclpy.create_node("service_again_server", namespace=NAMESPACE)
        executor = MultiThreadedExecutor(num_threads=4)
        executor.add_node(node)
        spinner = SpinningThread(executor).start()
        services: list[FirstUnanswered] = []
        try:
            yield client, lambda kind, name: services.append(FirstUnanswered(node, kind, name)) or services[-1]
        finally:
            for service in services:
                service.release()
            spinner.stop()
            node.destroy_node()


def test_a_reset_left_unanswered_is_asked_again_and_the_first_answer_counts(server):
    client, serve = server
    reset = serve(ResetSimulation, topics.RESET)
    assert client.reset(timeout=30.0) == "answer to request 2"
    assert reset.requests == 2


def test_a_step_of_cycles_is_not_sent_twice_and_the_caller_is_told(server):
    client, serve = server
    step = serve(StepSimulation, topics.STEP)
    with pytest.raises(RobotClientError, match="no service step"):
        client.step(5, timeout=4 * AGAIN * (robot_client.ASK_AGAIN_TIMES + 1))
    assert step.requests == 1
