"""A graph's log tails: what a benchmark whose log folder is temporary prints when it fails;
and where each node's threads are, which a test whose graph stopped answering prints.

Real processes started by :class:`~humanoid_core.processes.Graph` (a module that prints
numbered lines and its namespace, then exits), in two namespaces, as the robots of one
world are named; a module whose second thread waits on a lock nobody releases."""

import os
import time

from humanoid_core.processes import Graph, NodeSpec

LINES = 30
#: s a process may take to start, or to print its stacks, on a loaded machine.
PATIENCE = 60.0
PRINTER = """
import sys
namespace = next((a.split(":=")[1] for a in sys.argv if a.startswith("__ns:=")), "/")
for n in range(1, {lines} + 1):
    print(f"{{namespace}} line {{n}}")
"""


def test_each_process_gives_its_last_lines_under_its_name(tmp_path, monkeypatch):
    (tmp_path / "numbered_lines.py").write_text(PRINTER.format(lines=LINES))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    specs = [NodeSpec("printer", "numbered_lines", namespace=namespace)
             for namespace in ("/robot_1", "/robot_2")]
    graph = Graph(specs, log_dir=tmp_path / "logs").start()
    try:
        for process in graph.processes.values():
            assert process.wait(60.0) == 0
    finally:
        graph.stop()
    tails = graph.log_tails(3).splitlines()
    assert tails == ["--- robot_1/printer ---", "/robot_1 line 28", "/robot_1 line 29", "/robot_1 line 30",
                     "--- robot_2/printer ---", "/robot_2 line 28", "/robot_2 line 29", "/robot_2 line 30"]


STUCK = """
import threading, time
held = threading.Lock()
held.acquire()

def waits_for_the_lock():
    held.acquire()

threading.Thread(target=waits_for_the_lock, name="stuck").start()
print("started", flush=True)
while True:
    time.sleep(0.1)
"""


def test_a_graph_tells_where_each_thread_of_its_nodes_is_and_they_go_on(tmp_path, monkeypatch):
    (tmp_path / "stuck_node.py").write_text(STUCK)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    graph = Graph([NodeSpec("stuck", "stuck_node")], log_dir=tmp_path / "logs").start()
    process = graph.processes["stuck"]
    try:
        deadline = time.monotonic() + PATIENCE
        while "started" not in graph.log_text("stuck"):  # the module runs: run_tethered's handler is set
            assert process.poll() is None and time.monotonic() < deadline, graph.log_text("stuck")
            time.sleep(0.05)
        (stacks,) = graph.thread_stacks(timeout=PATIENCE).values()
        assert "in waits_for_the_lock" in stacks, stacks  # the stuck thread, at its line
        assert stacks.count("(most recent call first):") == 2, stacks  # and the main thread
        assert process.poll() is None  # it goes on
    finally:
        graph.stop(grace=1.0)  # (it ignores SIGINT, as a node does until it runs)
