"""Test-session settings and fixtures shared by every package's tests and the system tests.

Every process a test starts inherits this environment: DDS discovery stays on the
loopback interface and the session uses a ROS domain of its own, so parallel test
runs (and other ROS users on the machine) never see each other.

Fixtures for system tests (real nodes in their own processes, talking over DDS):

- ``robot_graph``: a factory starting a node graph (list of NodeSpec) and a
  RobotClient connected to it; everything is stopped at the end of the test, and the
  nodes' logs are printed when the test fails.
"""

import os

import pytest

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("ROS_DOMAIN_ID", str(os.getpid() % 100 + 1))


@pytest.fixture
def robot_graph(tmp_path, request):
    """``start(nodes, client_name="test_client") -> (graph, client)``; stopped after the test."""
    from humanoid_bringup.graph import Graph
    from humanoid_bringup.robot_client import RobotClient

    started = []

    def start(nodes, client_name="test_client"):
        graph = Graph(nodes, log_dir=tmp_path / f"logs{len(started)}").start()
        client = RobotClient(client_name)
        started.append((graph, client))
        client.wait_for_joint_states(60.0)
        return graph, client

    yield start
    failed = getattr(request.node, "rep_call", None) is not None and request.node.rep_call.failed
    for graph, client in started:
        client.close()
        codes = graph.stop()
        if failed:
            for spec in graph.nodes:
                print(f"----- log of {spec.name} (exit {codes.get(spec.name)}) -----")
                print(graph.log_text(spec.name)[-4000:])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Remember each phase's report on the test item (for fixtures that print logs on failure)."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)
