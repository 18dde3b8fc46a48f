"""Bringing a node graph up without ``ros2 launch``: one process per node.

Used by the ``humanoid`` command (``humanoid_bringup.graphs`` lists the stack's
graphs, the same nodes and parameter files as the launch files) and by every
package's system tests. Each node runs in its own process with the caller's
environment (so DDS discovery range and domain are inherited). Stopping sends
SIGINT (a ROS node's normal shutdown), then SIGTERM, then SIGKILL to stragglers.

Each node runs in a session of its own (a Ctrl-C on the terminal reaches only the
launcher, which stops the nodes in order), yet dies with the launcher: it gets SIGTERM
when the thread that started it ends, whatever killed it (even SIGKILL), and treats
SIGHUP as SIGTERM (:mod:`humanoid_core.processes.process_lifetime`). Start a graph from a
thread that lives as long as the graph should.

A node that dies does not take the robot with it: :meth:`Graph.serve` ends the graph
only when a node whose exit ends it (:attr:`OnExit.END_GRAPH`: the robot's driver, which
alone holds the servos) exits; an observer or a controller that dies is reported and
restarted (:data:`RESTART_POLICY`), meanwhile the driver keeps holding the robot.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import IO

from humanoid_core.processes.process_lifetime import running_process_groups, tethered_child

#: What Python's faulthandler prints above each thread's stack.
STACK_MARK = "(most recent call first):"


def end_left_behind(groups: Sequence[int], grace: float, poll: float = 0.05) -> list[int]:
    """Kill (SIGKILL) what is left in the process groups ``groups`` (each node's, named after
    it: it runs in a session of its own) once ``grace`` seconds passed; returns the groups that
    had to be killed. A child outliving its node was told to stop when the node died (its
    parent-death signal) and had ``grace`` to finish; one hung in its teardown would otherwise
    run on for ever, with nobody left to stop it. A zombie does not count: it has ended."""
    deadline = time.monotonic() + grace
    left = [group for group in groups if group in running_process_groups()]
    while left and time.monotonic() < deadline:
        time.sleep(poll)
        running = running_process_groups()
        left = [group for group in left if group in running]
    for group in left:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)
    return left


class OnExit(Enum):
    """What the graph does when the node exits by itself (not stopped by the graph)."""

    #: the graph ends (the others are stopped): the robot's driver, which alone holds the servos
    END_GRAPH = "end the graph"
    #: reported and restarted after a back-off (:data:`RESTART_POLICY`): observers, controllers
    RESTART = "restart"
    #: reported only: a node whose work a new process cannot take over (the recorder's bag)
    REPORT = "report"


@dataclass(frozen=True)
class RestartPolicy:
    """Restarts of an :attr:`OnExit.RESTART` node: after ``first_delay`` seconds, doubling up
    to ``max_delay``, at most ``max_restarts`` in a row; a node that then ran ``healthy_after``
    seconds has its count reset (a crash a day is not a crash loop)."""

    first_delay: float = 1.0
    max_delay: float = 16.0
    max_restarts: int = 5
    healthy_after: float = 60.0

    def delay(self, restart: int) -> float:
        """Seconds to wait before restart number ``restart`` (1, 2, ...)."""
        return min(self.max_delay, self.first_delay * 2.0 ** (restart - 1))


#: The one restart policy of the stack's graphs (``humanoid sim``/``humanoid real``; the
#: launch files give ``launch`` its first delay and count, ``launch`` has no back-off).
RESTART_POLICY = RestartPolicy()


#: The simulated clock's topic, global by ROS convention; a namespaced graph's nodes read
#: their own robot's (:meth:`NodeSpec.arguments`).
CLOCK_TOPIC = "/clock"


@dataclass(frozen=True)
class NodeSpec:
    """One node: its Python module (with a ``main``), parameters and parameter files, what its
    graph does when it exits, and its namespace (absolute, ``/a``; ``/``: none)."""

    name: str
    module: str
    parameters: dict[str, object] = field(default_factory=dict)
    parameter_files: tuple[Path, ...] = ()
    on_exit: OnExit = OnExit.RESTART
    namespace: str = "/"

    @property
    def hosted(self) -> tuple[str, ...]:
        """The nodes this process hosts besides its own (a container's ``nodes`` parameter)."""
        return tuple(name for name in str(self.parameters.get("nodes", "")).split(",") if name)

    def runs(self, name: str) -> bool:
        """Whether this process runs node ``name``: it is that node, or hosts it."""
        return name == self.name or name in self.hosted

    def remappings(self) -> list[tuple[str, str]]:
        """The node's topic remappings: in a namespace, ``/clock`` to the namespace's."""
        return [(CLOCK_TOPIC, f"{self.namespace}{CLOCK_TOPIC}")] if self.namespace.strip("/") else []

    def arguments(self) -> list[str]:
        """The node's ROS arguments: its name, namespace, parameter files and parameters. In a
        namespace, ``/clock`` is remapped to the namespace's: each robot's nodes run on their
        own robot's simulated time (its simulator publishes ``clock`` relative to it)."""
        args = ["--ros-args", "-r", f"__node:={self.name}"]
        if self.namespace.strip("/"):
            args += ["-r", f"__ns:={self.namespace}"]
        for source, target in self.remappings():
            args += ["-r", f"{source}:={target}"]
        for path in self.parameter_files:
            args += ["--params-file", str(path)]
        for key, value in self.parameters.items():
            args += ["-p", f"{key}:={_ros_value(value)}"]
        return args


def in_namespace(nodes: Sequence[NodeSpec], namespace: str) -> list[NodeSpec]:
    """The graph ``nodes`` with every node in ``namespace`` (absolute, already validated: the
    ROS layer's ``humanoid_control.ros.normalized_namespace``)."""
    return [replace(spec, namespace=namespace) for spec in nodes]


def driver_node_spec(name: str, module: str, robot: str, parameters: Mapping[str, object] | None = None) -> NodeSpec:
    """A robot driver node: its defaults are the robot's parameter file (the node reads it),
    ``parameters`` override them; its exit ends the graph (nothing else holds the robot)."""
    return NodeSpec(name, module, {"robot": robot, **(parameters or {})}, on_exit=OnExit.END_GRAPH)


def describe_exit(code: int) -> str:
    """A process's exit status in words: "exited with status 1", "was killed by SIGKILL"."""
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name}"
        return f"was killed by signal {-code}"
    return f"exited with status {code}"


def _process(pid: int, spec: NodeSpec) -> str:
    """``process N``, and the nodes it hosts."""
    return f"process {pid}" + (f", hosting {', '.join(spec.hosted)}" if spec.hosted else "")


def _report_on_stderr(line: str) -> None:
    print(f"humanoid: {line}", file=sys.stderr, flush=True)


def _ros_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class Graph:
    """A set of running node processes; a context manager that stops them on exit."""

    def __init__(self, nodes: Sequence[NodeSpec], log_dir: Path | None = None, echo: bool = False) -> None:
        self.nodes = list(nodes)
        #: nodes are named by their name where the graph's nodes share a namespace (one robot's
        #: graph), by their namespace and name where they do not (robots of one world)
        self._qualified = len({spec.namespace for spec in self.nodes}) > 1
        self.log_dir = log_dir
        self.echo = echo
        self.processes: dict[str, subprocess.Popen] = {}
        #: restarts per node so far (``serve``); a node given up on is in :attr:`given_up`
        self.restarts: dict[str, int] = {}
        #: nodes that died and were not restarted, with their last exit status
        self.given_up: dict[str, int] = {}
        self._logs: list[IO] = []

    def key(self, spec: NodeSpec) -> str:
        """How the graph names ``spec``'s process (its :attr:`processes`, reports and log):
        ``name``, or ``namespace/name`` (relative) in a graph of several namespaces."""
        return f"{spec.namespace.strip('/')}/{spec.name}" if self._qualified and spec.namespace != "/" else spec.name

    def start(self) -> Graph:
        for spec in self.nodes:
            self._launch(spec)
        return self

    def _launch(self, spec: NodeSpec, again: bool = False, restart_reason: str | None = None) -> None:
        output: int | IO | None = None
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            path = self.log_dir / f"{self.key(spec)}.log"
            path.parent.mkdir(parents=True, exist_ok=True)
            log = open(path, "a" if again else "w")  # noqa: SIM115 - closed in stop()
            self._logs.append(log)
            output = log
        elif not self.echo:
            output = subprocess.DEVNULL
        command, env = tethered_child(spec.module, spec.arguments(), restart_reason)
        self.processes[self.key(spec)] = subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT if output is not None else None,
            env=env, start_new_session=True)

    def __enter__(self) -> Graph:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def exited(self) -> dict[str, int]:
        """Nodes that have exited, with their exit codes."""
        return {name: code for name, p in self.processes.items() if (code := p.poll()) is not None}

    def serve(self, on_death: Callable[[NodeSpec, int], None] | None = None,
              report: Callable[[str], None] = _report_on_stderr, policy: RestartPolicy = RESTART_POLICY,
              poll: float = 0.1) -> dict[str, int]:
        """Supervise the running graph until a node whose exit ends it exits (or every node is
        gone for good); returns that node's exit code. Every other death is reported (``report``:
        one line naming the node and how it ended) and handled as its spec says; ``on_death``
        is then called with the node and its status. Call it from the thread that started the
        graph: a restarted node dies with that thread."""
        due: dict[str, float] = {}  # node -> monotonic time of its restart
        reasons: dict[str, str] = {}  # node -> why it is restarted (the new process reports it)
        started = dict.fromkeys(self.processes, time.monotonic())
        while True:
            now = time.monotonic()
            for spec in self.nodes:
                name = self.key(spec)
                process = self.processes[name]
                code = process.poll()
                if code is None or name in due or name in self.given_up:
                    continue
                if spec.on_exit is OnExit.END_GRAPH:
                    report(f"{name} {describe_exit(code)}: stopping the graph")
                    return {name: code}
                if now - started[name] >= policy.healthy_after:
                    self.restarts[name] = 0
                restart = self.restarts.get(name, 0) + 1
                if spec.on_exit is OnExit.RESTART and restart <= policy.max_restarts:
                    due[name] = now + policy.delay(restart)
                    reasons[name] = (f"restart {restart} of {policy.max_restarts}: process {process.pid} "
                                          f"{describe_exit(code)}")
                    report(f"{name} ({_process(process.pid, spec)}) {describe_exit(code)}; restarting it in "
                           f"{policy.delay(restart):g} s (restart {restart} of {policy.max_restarts})")
                else:
                    self.given_up[name] = code
                    why = "not restarted" if spec.on_exit is OnExit.REPORT else \
                        f"not restarted again after {policy.max_restarts} restarts"
                    report(f"{name} ({_process(process.pid, spec)}) {describe_exit(code)}; {why}")
                if on_death is not None:
                    on_death(spec, code)
            for name in [name for name, when in due.items() if when <= now]:
                del due[name]
                spec = next(s for s in self.nodes if self.key(s) == name)
                self.restarts[name] = self.restarts.get(name, 0) + 1
                self._launch(spec, again=True, restart_reason=reasons.pop(name, None))
                started[name] = time.monotonic()
                report(f"{name} restarted (process {self.processes[name].pid})")
            if not due and all(self.processes[self.key(s)].poll() is not None for s in self.nodes):
                return self.exited()
            time.sleep(poll)

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
        """Stop every node: SIGINT, then SIGTERM, then SIGKILL; then what a node left behind
        (a child of its own, such as a driver's loop process, still running after the node
        ended) gets ``grace`` seconds more, then SIGKILL; returns the nodes' exit codes."""
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
        end_left_behind([p.pid for p in self.processes.values()], grace)
        for log in self._logs:
            log.close()
        self._logs.clear()
        return self.exited()

    def log_text(self, name: str) -> str:
        """What the process of node ``name`` printed (when logging to files): the node's own,
        or the container's that hosts it."""
        if self.log_dir is None:
            return ""
        process = next((self.key(spec) for spec in self.nodes if self.key(spec) == name or spec.runs(name)), name)
        path = self.log_dir / f"{process}.log"
        return path.read_text() if path.exists() else ""

    def thread_stacks(self, timeout: float = 5.0) -> dict[str, str]:
        """Where every thread of each running node process is (when logging to files): each
        is sent SIGUSR1 (run_tethered's handler prints the stacks into its log and the process
        goes on) and its log's new text is returned once a stack is there and the log has
        stopped growing, or after ``timeout`` s. For a graph that stopped answering, before
        it is stopped."""
        if self.log_dir is None:
            return {}
        sizes = {}
        for name, process in self.processes.items():
            if process.poll() is None:
                path = self.log_dir / f"{name}.log"
                sizes[name] = path.stat().st_size if path.exists() else 0
                process.send_signal(signal.SIGUSR1)
        read: dict[str, str] = {}
        stacks: dict[str, str] = {}
        deadline = time.monotonic() + timeout
        while len(stacks) < len(sizes) and time.monotonic() < deadline:
            time.sleep(0.05)  # the handler writes all of it at once: read until it stops growing
            for name, size in sizes.items():
                with open(self.log_dir / f"{name}.log", "rb") as log:
                    log.seek(size)
                    text = log.read().decode(errors="replace")
                if STACK_MARK in text and text == read.get(name):
                    stacks[name] = text
                read[name] = text
        return {name: stacks.get(name, read.get(name, "") + f"(no stacks within {timeout:g} s)") for name in sizes}

    def log_tails(self, lines: int = 20) -> str:
        """The last ``lines`` lines each process printed (when logging to files), each under its
        name: what a command whose log folder is temporary (a benchmark's) reports when it fails."""
        return "\n".join(f"--- {name} ---\n" + "\n".join(self.log_text(name).splitlines()[-lines:])
                         for name in dict.fromkeys(self.key(spec) for spec in self.nodes))
