"""Test-session settings and fixtures shared by every package's tests and the system tests.

Every process a test starts inherits this environment: DDS discovery stays on the
loopback interface, DDS sockets are bound to it and to shared memory only (a Fast DDS
profile), and the session uses a ROS domain of its own (locked for the
session, so that parallel test runs on one machine never see each other).

Fixtures for system tests (real nodes in their own processes, talking over DDS):

- ``robot_graph``: a factory starting a node graph (list of NodeSpec) and a
  RobotClient connected to it; everything is stopped at the end of the test, and the
  nodes' logs are printed when the test fails.
- ``module_graph``: the module's ``GRAPH`` kept for the whole module, with its client
  (walks that go on where the previous test left the robot).
- ``cpu_hogs``: ``with cpu_hogs(count):`` runs ``count`` processes spinning on the CPU
  (a loaded machine), killed when the block ends.

Only one robot graph per namespace may run at a time in a session (they share the session's
domain): a module that keeps a graph alive in a module-scoped fixture starts others only
under namespaces of their own.
"""

import contextlib
import fcntl
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pytest

#: a hung test ends its worker, not the run (test/hard_timeout.py)
pytest_plugins = ["hard_timeout"]

_DOMAIN_LOCKS = []  # held open (and locked) for the whole test session


def _domain_lock(domain: int) -> IO:
    """The lock file of ROS domain ``domain`` (the one ``scripts/run.sh`` locks), opened."""
    return open(Path(tempfile.gettempdir()) / f"humanoid-ros-domain-{domain}.lock", "w")


def _private_domain() -> int:
    """A ROS domain (1..100) no other run on this machine is using right now: each session
    holds an exclusive lock on a file named after its domain, and a run given a domain
    (``scripts/run.sh`` with HUMANOID_DOMAIN_ID) a shared one. An explicit HUMANOID_DOMAIN_ID
    wins: locked shared, as run.sh locks it (the session's workers share it then), and refused
    when a run that chose it for itself holds it."""
    if os.environ.get("HUMANOID_DOMAIN_ID"):
        domain = int(os.environ["HUMANOID_DOMAIN_ID"])
        handle = _domain_lock(domain)
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise pytest.UsageError(f"HUMANOID_DOMAIN_ID={domain}: that ROS domain is held by a run that chose it for "
                                    "itself (another test session, a demo): give another, or none") from None
        _DOMAIN_LOCKS.append(handle)
        return domain
    start = os.getpid() % 100
    for offset in range(100):
        domain = 1 + (start + offset) % 100
        handle = _domain_lock(domain)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        _DOMAIN_LOCKS.append(handle)
        return domain
    return 1 + start


#: The Fast DDS profile binding DDS to the loopback interface and shared memory only.
LOOPBACK_PROFILE = Path(__file__).resolve().parent / "humanoid_bringup" / "config" / "dds" / "fastdds_loopback.xml"

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ["FASTDDS_DEFAULT_PROFILES_FILE"] = str(LOOPBACK_PROFILE)
os.environ["ROS_DOMAIN_ID"] = str(_private_domain())
#: Inherited by every process the tests start: how the session finds those left running.
SESSION_VARIABLE = "HUMANOID_TEST_SESSION"
os.environ[SESSION_VARIABLE] = str(os.getpid())
#: s the processes a module's tests started may take to end after its last test (and the
#: session's after the last test); HUMANOID_LEFT_BEHIND_GRACE overrides it (test/test_left_behind.py).
LEFT_BEHIND_GRACE = float(os.environ.get("HUMANOID_LEFT_BEHIND_GRACE", "30"))

# Each worker in a session of its own: where the kernel schedules by session (autogroup), each
# graph node, started in a session of its own (humanoid_core.processes.node_graph), weighs as
# much as the whole session of the tests; the three workers' clients and in-process tests then
# shared one node's share. Beside two real-time graphs a worker's in-process test got 6 % of a
# core and a test's trajectory reached its robot seconds late (test_namespaces beside
# test_sim_node_system). A worker started by pytest-xdist is no process group leader.
if os.environ.get("PYTEST_XDIST_WORKER"):
    with contextlib.suppress(PermissionError):
        os.setsid()

# A session started in the background by a script (`make test &`, nohup) inherits SIGINT or
# SIGHUP ignored, and so would every process the tests start: the tests that stop a node or a
# launcher with those signals need them at their defaults.
for _signal, _handler in ((signal.SIGINT, signal.default_int_handler), (signal.SIGHUP, signal.SIG_DFL)):
    if signal.getsignal(_signal) == signal.SIG_IGN:
        signal.signal(_signal, _handler)


def _left_running() -> dict[int, str]:
    """Processes this session's tests started that still run (zombies are not running), each
    with its command line and the test it was started in: those whose environment carries
    this session's variable (a pytest-xdist worker is a session of its own: its processes
    carry its process ID), and, where the environment cannot be read or reads empty, this
    process's descendants (a process that sets its own environment, as Ray's agents do, is
    not counted by descent). A process read in the middle of its exec shows an empty
    environment: the kernel maps the new one after the close-on-exec descriptors that let
    ``Popen`` return are closed (a clean-clone run once missed a process started a moment
    before the check that way, and named it a module late)."""
    from humanoid_core.processes import is_running, process_tree

    marker = f"{SESSION_VARIABLE}={os.environ[SESSION_VARIABLE]}".encode()
    descendants: set[int] | None = None  # read once, where an environment cannot be read
    found = {}
    for entry, environment in _environments():
        if int(entry.name) == os.getpid():
            continue
        if environment:
            ours = marker in environment
        else:  # unreadable or empty (a kernel thread; a process in its exec, its new environment not yet mapped)
            if descendants is None:
                descendants = set(process_tree(os.getpid())) - {os.getpid()}
            ours = int(entry.name) in descendants
        if not ours or not is_running(int(entry.name)):
            continue
        if (what := _describe(entry, environment)) is not None:
            found[int(entry.name)] = what
    return found


def _environments() -> Iterator[tuple[Path, list[bytes]]]:
    """Every process's /proc entry and its environment's entries (none where it cannot be
    read: gone meanwhile, or not ours to read)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "environ").read_bytes()
        except OSError:
            raw = b""
        yield entry, raw.split(b"\0") if raw else []


def _describe(entry: Path, environment: list[bytes]) -> str | None:
    """A process's command line and the test it was started in (None: it is gone)."""
    try:
        command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return None
    test = next((v.split(b"=", 1)[1].decode(errors="replace") for v in environment
                 if v.startswith(b"PYTEST_CURRENT_TEST=")), "?")
    return f"{command[:160]} (started in {test})"


def _orphaned() -> dict[int, str]:
    """Processes a test session started whose session process has died (a pytest-xdist worker
    that crashed, or that the hard-timeout watchdog ended): nobody else stops them. Read from
    their environment (what :func:`_left_running` reads), each with its command and test."""
    from humanoid_core.processes import is_running

    prefix = f"{SESSION_VARIABLE}=".encode()
    found = {}
    for entry, environment in _environments():
        session = next((v[len(prefix):] for v in environment if v.startswith(prefix)), b"")
        if not session.isdigit() or is_running(int(session)) or not is_running(int(entry.name)):
            continue
        if (what := _describe(entry, environment)) is not None:
            found[int(entry.name)] = what
    return found


def _still_running_after(grace: float, find: Callable[[], dict[int, str]] = _left_running) -> dict[int, str]:
    """What ``find`` (:func:`_left_running`, or :func:`_orphaned`) finds still running once it
    ran dry or ``grace`` s passed."""
    deadline = time.monotonic() + grace
    left = find()
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = find()
    return left


def _kill(processes: dict[int, str]) -> None:
    for pid in processes:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def pytest_configure(config) -> None:
    from node_teardown import follow_nodes

    follow_nodes()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """A module's tests leave no process and no rclpy node to the next module's: once its last
    test is torn down, whatever its tests started (in this worker) must end within
    LEFT_BEHIND_GRACE s, else that test fails naming it, and it is killed. A graph still
    stopping shares the worker's domain with the next module's graph (a launcher killed with
    its process group leaves its nodes, each in a session of its own, to stop on their
    parent-death signal meanwhile). A node of this process not destroyed whole fails the test
    too, and is destroyed now rather than by whichever later test's garbage collection finds
    it (node_teardown.end_left_behind)."""
    from node_teardown import end_left_behind

    result = yield
    if nextitem is None or nextitem.path != item.path:
        if sys.platform.startswith("linux") and (left := _still_running_after(LEFT_BEHIND_GRACE)):
            _kill(left)
            raise AssertionError(f"{len(left)} process(es) started by {item.path.name}'s tests still ran "
                                 f"{LEFT_BEHIND_GRACE:g} s after its last test (killed now): "
                                 + "; ".join(f"{pid}: {what}" for pid, what in sorted(left.items())))
        if nodes := end_left_behind():
            raise AssertionError(f"{len(nodes)} rclpy node(s) made by {item.path.name}'s tests were not destroyed "
                                 f"whole (node and waitables) by its end (destroyed now): {', '.join(nodes)}")
    return result


def pytest_sessionfinish(session, exitstatus) -> None:
    """Tests leave no process behind: whatever they started and still runs LEFT_BEHIND_GRACE
    seconds after the last test fails the session, named with the test it was started in,
    and is killed. Nor the shared memory of the processes the tests killed outright (the
    controller's session, once every worker's has ended)."""
    if not sys.platform.startswith("linux"):
        return
    left = _still_running_after(LEFT_BEHIND_GRACE)
    if left:
        _kill(left)
        _report(session.config, f"{len(left)} process(es) started by the tests still ran {LEFT_BEHIND_GRACE:g} s "
                                "after the last test (killed now):", left)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if not hasattr(session.config, "workerinput"):
        _clean_shared_memory(session.config)


#: What :func:`_clean_shared_memory` removed, for the run's summary.
SHARED_MEMORY_CLEANED = pytest.StashKey[str]()


def _clean_shared_memory(config) -> None:
    """Fast DDS's shared-memory files that no living process holds (those of the processes the
    tests kill outright, and of any other process gone), removed and counted on the run's output."""
    from humanoid_control.ros import clean_left_behind

    cleaned = clean_left_behind()
    if cleaned is not None and cleaned.files:
        config.stash[SHARED_MEMORY_CLEANED] = cleaned.describe()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """(pytest-xdist, in the controller) A worker that died cannot stop what its tests started:
    those processes get LEFT_BEHIND_GRACE s (a graph's nodes stop on their parent-death
    signal), then are killed and named. The run has failed already (the crashed test)."""
    if error is None or not sys.platform.startswith("linux"):
        return
    left = _still_running_after(LEFT_BEHIND_GRACE, _orphaned)
    if left:
        _kill(left)
        _report(node.config, f"{len(left)} process(es) started by the tests of the worker that died still ran "
                             f"{LEFT_BEHIND_GRACE:g} s after it (killed now):", left)


def _report(config, title: str, processes: dict[int, str]) -> None:
    lines = [title, *(f"  {pid}: {what}" for pid, what in sorted(processes.items()))]
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        print("\n".join(lines), file=sys.stderr)
        return
    reporter.ensure_newline()
    reporter.write_sep("=", "processes left running", red=True)
    for line in lines:
        reporter.write_line(line, red=True)


#: characters of a failed test's message in the run's last lines (:func:`pytest_terminal_summary`)
FAILED_LINE = 160


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter):
    """The run's last lines name every failed test, a line each, after pytest's own summary:
    on CI (pytest sees a ``CI`` variable) that summary prints each failure's whole message,
    and a comparison of two long lists pushed the names out of the part of the log CI shows.
    Before the summary, what the session's end removed of Fast DDS's shared memory."""
    if SHARED_MEMORY_CLEANED in terminalreporter.config.stash:
        terminalreporter.write_line(terminalreporter.config.stash[SHARED_MEMORY_CLEANED])
    result = yield
    failed = [report for kind in ("failed", "error") for report in terminalreporter.stats.get(kind, ())
              if getattr(report, "nodeid", "")]
    if failed:
        terminalreporter.write_sep("=", f"{len(failed)} failed", red=True)
        for report in failed:
            crash = getattr(report.longrepr, "reprcrash", None)
            message = crash.message.splitlines()[0] if crash is not None and crash.message else ""
            phase = "" if report.when == "call" else f"{report.when} "  # a fixture's setup or teardown
            terminalreporter.write_line(f"{phase}{report.nodeid}: {message}"[:FAILED_LINE], red=True)
    return result


def pytest_report_header() -> str:
    return (f"ROS_DOMAIN_ID={os.environ['ROS_DOMAIN_ID']} (private to this session), "
            f"ROS_AUTOMATIC_DISCOVERY_RANGE={os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE']}, "
            f"FASTDDS_DEFAULT_PROFILES_FILE={os.environ['FASTDDS_DEFAULT_PROFILES_FILE']}")


@pytest.fixture
def robot_graph(tmp_path, request):
    """``start(nodes, client_name="test_client") -> (graph, client)``; stopped after the test."""
    from humanoid_control.ros import RobotClient
    from humanoid_core.processes import Graph

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
                print(graph.log_text(graph.key(spec))[-4000:])


#: The node name of :func:`module_graph`'s client.
MODULE_CLIENT = "module_test_client"


@pytest.fixture(scope="module")
def module_graph(tmp_path_factory, request):
    """One graph for a whole module, its ``GRAPH`` (a list of NodeSpec), and a RobotClient
    connected to it (tests that go on where the previous one left the robot); the nodes'
    logs are printed when the module ends. A module whose ``LOCKSTEP`` is true has a lockstep
    graph: the client is then a participant (name it in ``sim_nodes``' participants:
    :data:`MODULE_CLIENT`)."""
    from humanoid_control.ros import RobotClient
    from humanoid_core.processes import Graph

    graph = Graph(request.module.GRAPH, log_dir=tmp_path_factory.mktemp(request.module.__name__)).start()
    client = RobotClient(MODULE_CLIENT, lockstep=getattr(request.module, "LOCKSTEP", False))
    try:
        client.wait_for_joint_states(60.0)
        yield client
    finally:
        client.close()
        codes = graph.stop()
        print({name: graph.log_text(name)[-3000:] for name in codes})


#: A file to which each test appends the CPU-seconds it cost (this process and the processes it
#: started and waited for: graphs, commands; not a Ray cluster's), its id and this process's own
#: share (the in-process work: tests without ROS, the test's own clients), when set: where the
#: suite's time goes (docs/testing.md, "Where the time goes"). Module fixtures count in the
#: test that sets them up and in the one they are torn down after.
CPU_LOG_VARIABLE = "HUMANOID_TEST_CPU_LOG"


def _cpu_seconds() -> tuple[float, float]:
    """CPU-seconds of this process with its waited-for children, and of this process alone."""
    import resource

    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    alone = own.ru_utime + own.ru_stime
    return alone + children.ru_utime + children.ru_stime, alone


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    log = os.environ.get(CPU_LOG_VARIABLE)
    before = _cpu_seconds() if log else (0.0, 0.0)
    yield
    if log:
        (total, alone), (total_before, alone_before) = _cpu_seconds(), before
        with open(log, "a") as out:
            out.write(f"{total - total_before:.3f}\t{item.nodeid}\t{alone - alone_before:.3f}\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Remember each phase's report on the test item (for fixtures that print logs on failure);
    a failed test's report carries the logs of the graphs ``system_support.running`` holds, and
    where each of their nodes' threads was."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)
    support = sys.modules.get("system_support")
    if report.failed and support is not None:
        for graph in support.LIVE_GRAPHS:
            report.sections.extend(support.graph_report(graph, 4000))


class SpinningNodes:
    """``make(*names)``: rclpy nodes in this process, spun by one multi-threaded executor in a
    thread; ``between_turns()`` holds that thread to destroy a node's subscription or client."""

    def __init__(self) -> None:
        from node_teardown import SpinningThread
        from rclpy.executors import MultiThreadedExecutor

        self.made: list = []
        self.spinner = SpinningThread(MultiThreadedExecutor())

    def __call__(self, *names: str) -> list:
        import rclpy

        nodes = [rclpy.create_node(name) for name in names]
        for node in nodes:
            self.spinner.executor.add_node(node)
        self.made.extend(nodes)
        return nodes

    def between_turns(self):
        return self.spinner.between_turns()


@pytest.fixture
def spinning_nodes():
    """:class:`SpinningNodes`, for tests of small ROS pieces over real DDS; destroyed after the
    test."""
    import rclpy
    from node_teardown import destroy_whole

    rclpy.init()
    nodes = SpinningNodes()
    nodes.spinner.start()
    try:
        yield nodes
    finally:
        nodes.spinner.stop()  # before the nodes go: a turn of the executor still uses them
        for node in nodes.made:
            destroy_whole(node)
        rclpy.try_shutdown()


@pytest.fixture
def cpu_hogs():
    """``with cpu_hogs(count):`` keeps ``count`` processes spinning on the CPU (``yes``), each in
    a session of its own and dying with the test's process: other work of the machine, as the
    graph's nodes are. In the test's session they weighed on the test's own process above all,
    where the kernel schedules by session (autogroup): two of them left the test's client a
    third of its session's share. Clean-clone run 312 (beside two more hogs) then failed the
    lockstep determinism test: the simulation, left by the client after the walk's goal, ran on
    at full speed, and the client, which follows every state, had not got the walk's result
    within 300 s (the likely cause; not reproduced in three parallel runs beside two hogs)."""
    import contextlib
    import subprocess

    from humanoid_core.processes import tethered_program

    prefix, tether = tethered_program()

    @contextlib.contextmanager
    def hogs(count: int):
        spinning = [subprocess.Popen([*prefix, "yes"], stdout=subprocess.DEVNULL, env=os.environ | tether,
                                     start_new_session=True) for _ in range(count)]
        try:
            yield
        finally:
            for hog in spinning:
                hog.kill()
                hog.wait()

    return hogs
