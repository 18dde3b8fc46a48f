"""A graph's log tails: what a benchmark whose log folder is temporary prints when it fails.

Real processes started by :class:`~humanoid_core.processes.Graph` (a module that prints
numbered lines and its namespace, then exits), in two namespaces, as the robots of one
world are named."""

import os

from humanoid_core.processes import Graph, NodeSpec

LINES = 30
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
