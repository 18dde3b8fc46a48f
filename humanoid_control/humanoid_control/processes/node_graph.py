"""Bringing a node graph up without ``ros2 launch``: one process per node.

Used by the ``humanoid`` command (``humanoid_bringup.graphs`` lists the stack's
graphs, the same nodes and parameter files as the launch files) and by every
package's system tests. Each node runs in its own process with the caller's
environment (so DDS discovery range and domain are inherited). Stopping sends
SIGINT (a ROS node's normal shutdown), then SIGTERM, then SIGKILL to stragglers.

Each node runs in a session of its own (a Ctrl-C on the terminal reaches only the
launcher, which stops the nodes in order), yet dies with the launcher: it gets SIGTERM
when the thread that started it ends, whatever killed it (even SIGKILL), and treats
SIGHUP as SIGTERM (:mod:`humanoid_control.processes.process_lifetime`). Start a graph from a
thread that lives as long as the graph should.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from humanoid_control.processes.process_lifetime import tethered_child


@dataclass(frozen=True)
class NodeSpec:
    """One node: its Python module (with a ``main``), parameters and parameter files."""

    name: str
    module: str
    parameters: dict[str, object] = field(default_factory=dict)
    parameter_files: tuple[Path, ...] = ()

    def arguments(self) -> list[str]:
        """The node's ROS arguments: its name, parameter files and parameters."""
        args = ["--ros-args", "-r", f"__node:={self.name}"]
        for path in self.parameter_files:
            args += ["--params-file", str(path)]
        for key, value in self.parameters.items():
            args += ["-p", f"{key}:={_ros_value(value)}"]
        return args


def driver_node_spec(name: str, module: str, parameter_file: Path, robot: str,
                     parameters: Mapping[str, object] | None = None) -> NodeSpec:
    """A robot driver node: the robot's parameter file, then ``parameters`` overriding it."""
    return NodeSpec(name, module, {"robot": robot, **(parameters or {})}, (parameter_file,))


def _ros_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class Graph:
    """A set of running node processes; a context manager that stops them on exit."""

    def __init__(self, nodes: Sequence[NodeSpec], log_dir: Path | None = None, echo: bool = False) -> None:
        self.nodes = list(nodes)
        self.log_dir = log_dir
        self.echo = echo
        self.processes: dict[str, subprocess.Popen] = {}
        self._logs: list[IO] = []

    def start(self) -> Graph:
        for spec in self.nodes:
            output: int | IO | None = None
            if self.log_dir is not None:
                self.log_dir.mkdir(parents=True, exist_ok=True)
                log = open(self.log_dir / f"{spec.name}.log", "w")  # noqa: SIM115 - closed in stop()
                self._logs.append(log)
                output = log
            elif not self.echo:
                output = subprocess.DEVNULL
            command, env = tethered_child(spec.module, spec.arguments())
            self.processes[spec.name] = subprocess.Popen(
                command, stdout=output, stderr=subprocess.STDOUT if output is not None else None,
                env=env, start_new_session=True)
        return self

    def __enter__(self) -> Graph:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def exited(self) -> dict[str, int]:
        """Nodes that have exited, with their exit codes."""
        return {name: code for name, p in self.processes.items() if (code := p.poll()) is not None}

    def wait_any(self, poll: float = 0.2) -> dict[str, int]:
        """Block until at least one node has exited; returns the exit codes so far."""
        while not (codes := self.exited()):
            time.sleep(poll)
        return codes

    def wait(self, timeout: float | None = None) -> dict[str, int]:
        """Wait until every node has exited (or the timeout passed); returns exit codes."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for process in self.processes.values():
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                process.wait(remaining)
            except subprocess.TimeoutExpired:
                break
        return self.exited()

    def stop(self, grace: float = 10.0) -> dict[str, int]:
        """Stop every node: SIGINT, then SIGTERM, then SIGKILL; returns exit codes."""
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
            running = [p for p in self.processes.values() if p.poll() is None]
            if not running:
                break
            for process in running:
                process.send_signal(sig)
            deadline = time.monotonic() + grace
            for process in running:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(max(0.0, deadline - time.monotonic()))
        for log in self._logs:
            log.close()
        self._logs.clear()
        return self.exited()

    def log_text(self, name: str) -> str:
        """What a node printed (when logging to files)."""
        if self.log_dir is None:
            return ""
        path = self.log_dir / f"{name}.log"
        return path.read_text() if path.exists() else ""
