"""``humanoid sim`` and ``humanoid real`` from the command line: they serve until
interrupted or for a duration, and their nodes never outlive them (killed outright or
hung up, the launcher takes its nodes with it; a hardware node leaves the servos in
the configured safe state). A node other than the driver that dies does not stop the
robot: it is reported and restarted while the driver holds; the driver's death ends
the graph.

A graph start costs seconds of CPU (the node processes' imports, the model, discovery), so
each graph here serves every check it can: a graph ends once, so each way of ending has a
graph of its own, on the Bioloid (the lightest robot; what the launcher does with a signal
is the same for every robot, and for both commands: ``serve``). Each signal to the launcher
is sent once: SIGTERM and SIGKILL to ``humanoid sim`` (the simulation node's own SIGTERM, the
parent-death signal), SIGKILL and SIGHUP to ``humanoid real`` (the servos limp after each),
SIGKILL to ``humanoid real --emulate`` (the emulator goes too), SIGTERM to ``humanoid walk`` (a
command acting as a client of the graph it started), SIGINT to the recording graph,
whose container (hosting the recorder and the balance monitor) is killed first: the bag made
readable, the monitor back. The driver's death ends the hardware graph, after its monitor was
killed and came back while the servos held. The hardware tests share one ``humanoid emulate``
(a user keeps it running across graphs, and each test reads the Torque Enable its own graph
set)."""

import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus

from humanoid_bringup import RECORDER_NODE, real_nodes
from humanoid_control.ros import RobotClient, RobotClientError, poll_until
from humanoid_core.processes import child_processes, is_running
from humanoid_hw.emulator import robot_servos
from humanoid_interfaces.msg import BalanceState
from humanoid_sim import sim_nodes

#: Generous limit (wall seconds) for anything awaited; every wait ends when its condition holds.
PATIENCE = 60.0

pytestmark = pytest.mark.system


def test_humanoid_sim_duration_ends_it():
    result = subprocess.run(["humanoid", "sim", "--robot", "bioloid", "--duration", "2",
                             "--real-time-factor", "0"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "duration of 2 s reached" in result.stdout + result.stderr


# -- the nodes die with the launcher ------------------------------------------------------------
@contextlib.contextmanager
def launched(command: list[str], node_count: int) -> Iterator[tuple[subprocess.Popen, list[int], RobotClient]]:
    """A ``humanoid`` graph command serving, its node processes, and a client that has received
    its joint_states; whatever is left of it is killed at the end."""
    log = tempfile.TemporaryFile("w+")  # noqa: SIM115 - closed below
    launcher = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    launcher.log = log  # type: ignore[attr-defined]  # what the launcher and its nodes printed
    nodes: list[int] = []
    try:
        with RobotClient("lifetime_client") as client:
            client.wait_for_joint_states(60.0)
            nodes = poll_until(lambda: (found := child_processes(launcher.pid)) and len(found) == node_count and found,
                               f"{node_count} node processes", PATIENCE)
            yield launcher, nodes, client
    except BaseException:
        log.seek(0)
        print(f"----- output of {' '.join(command)} -----\n{log.read()[-6000:]}")
        raise
    finally:
        for pid in [launcher.pid, *nodes]:
            if is_running(pid):
                os.kill(pid, signal.SIGKILL)
        launcher.wait(PATIENCE)
        log.close()


def stop_launcher(launcher: subprocess.Popen, nodes: list[int], kill: signal.Signals) -> None:
    """Send ``kill`` to the launcher alone, then wait until none of its nodes is left. SIGINT and
    SIGTERM stop it cleanly (exit status 0)."""
    os.kill(launcher.pid, kill)
    code = launcher.wait(PATIENCE)
    launcher.log.seek(0)
    if kill == signal.SIGKILL:
        assert code == -signal.SIGKILL
    elif kill in (signal.SIGINT, signal.SIGTERM):  # the user's stop: the launcher stopped its nodes, exit 0
        assert code == 0, launcher.log.read()[-3000:]
    else:  # handled: the launcher stopped its nodes and exited by itself (1: a node had to be terminated)
        assert code in (0, 1), launcher.log.read()[-3000:]
    poll_until(lambda: not any(is_running(pid) for pid in nodes),
               f"every node process gone after {kill.name} to the launcher", PATIENCE)


@pytest.mark.parametrize("kill", [signal.SIGTERM, signal.SIGKILL])
def test_humanoid_sim_serves_until_signalled_and_its_nodes_die_with_it(kill):
    """No duration given: it serves until a signal ends it (SIGINT: the recorder test's end;
    SIGHUP: the hardware graph's, handled by the same ``serve``, the servos limp after it)."""
    with launched(["humanoid", "sim", "--robot", "bioloid"], len(sim_nodes("bioloid"))) as (launcher, nodes, client):
        client.wait_until(client.now() + 1.0)
        assert launcher.poll() is None  # still running: no duration given
        stop_launcher(launcher, nodes, kill)


def test_a_client_command_ends_on_sigterm_and_stops_its_graph():
    """``humanoid walk`` (a command that starts a simulation and acts on it as a client) ends
    on SIGTERM as on Ctrl-C, its nodes stopped: rclpy's own handler only shut its context
    down, and the command waited on the walk's result until its timeout (a process manager's
    stop, the parent-death signal)."""
    command = ["humanoid", "walk", "--robot", "bioloid", "--distance", "0.3"]
    with launched(command, len(sim_nodes("bioloid"))) as (launcher, nodes, client):
        client.wait_until(client.now() + 1.0)  # the command's client is up and acting meanwhile
        assert launcher.poll() is None
        os.kill(launcher.pid, signal.SIGTERM)
        code = launcher.wait(PATIENCE)
        assert code == 130, output(launcher)[-3000:]
        poll_until(lambda: not any(is_running(pid) for pid in nodes), "every node process gone", PATIENCE)


class Emulator:
    """``humanoid emulate`` in a process of its own, as a user runs it, asked for registers
    through its command interface (``get ID ITEM`` on its standard input)."""

    def __init__(self, link: Path) -> None:
        self.process = subprocess.Popen(["humanoid", "emulate", "--robot", "bioloid", "--link", str(link)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        text=True, start_new_session=True)
        self.port = self.process.stdout.readline().strip()
        assert self.port == str(link), f"the emulator printed {self.port!r}"
        self.servo_ids = sorted(robot_servos("bioloid", 1))

    def torques(self) -> list[int]:
        """Torque Enable of every servo."""
        values = []
        for servo_id in self.servo_ids:
            self.process.stdin.write(f"get {servo_id} torque_enable\n")
            self.process.stdin.flush()
            answer = self.process.stdout.readline().strip()
            assert answer.startswith(f"ok: servo {servo_id} torque_enable = "), answer
            values.append(int(answer.rsplit("= ", 1)[1]))
        return values

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(PATIENCE)


@pytest.fixture(scope="module")
def emulator(tmp_path_factory) -> Iterator[Emulator]:
    """One ``humanoid emulate`` for the module's hardware graphs, each started on its port in turn."""
    emulator = Emulator(tmp_path_factory.mktemp("bus") / "ttyDXL")
    yield emulator
    emulator.stop()


@pytest.mark.parametrize("kill", [signal.SIGKILL, signal.SIGHUP])
def test_hardware_nodes_die_with_humanoid_real_and_leave_the_servos_limp(emulator, kill):
    """The servos' Torque Enable, read from the emulator serving the bus: on while the node
    serves, off once the launcher was killed (on_shutdown: limp, the shipped policy)."""
    command = ["humanoid", "real", "--robot", "bioloid", "--port", emulator.port]
    with launched(command, len(real_nodes("bioloid"))) as (launcher, nodes, _client):
        assert emulator.torques() == [1] * 18
        stop_launcher(launcher, nodes, kill)
        poll_until(lambda: emulator.torques() == [0] * 18, "every servo limp", PATIENCE)


def test_the_emulator_and_the_nodes_die_with_humanoid_real_emulate():
    command = ["humanoid", "real", "--robot", "bioloid", "--emulate"]
    with launched(command, len(real_nodes("bioloid")) + 1) as (launcher, children_, _client):
        stop_launcher(launcher, children_, signal.SIGKILL)


# -- a dying observer is restarted, the driver holds; a dying driver ends the graph --------------
def node_process(nodes: list[int], name: str) -> int:
    """The process among ``nodes`` that runs node ``name``: its own (its --ros-args remapping), or
    the container that hosts it (its ``nodes`` parameter)."""
    for pid in nodes:
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            arguments = Path(f"/proc/{pid}/cmdline").read_text().split("\0")
            hosted = [a.split(":=", 1)[1].split(",") for a in arguments if a.startswith("nodes:=")]
            if f"__node:={name}" in arguments or any(name in names for names in hosted):
                return pid
    raise LookupError(f"no process of node {name} among {nodes}")


def process_name(pid: int) -> str:
    """The node name a process was started as (a container's, for the nodes it hosts)."""
    arguments = Path(f"/proc/{pid}/cmdline").read_text().split("\0")
    return next(a.split(":=", 1)[1] for a in arguments if a.startswith("__node:="))


def output(launcher: subprocess.Popen) -> str:
    launcher.log.seek(0)
    return launcher.log.read()


class MonitorWatch:
    """What the test hears of the balance monitor: its balance_state, and the launcher's
    reports of its process on diagnostics (a restart is not only a log line)."""

    def __init__(self, client: RobotClient) -> None:
        self.client = client
        self.states: list[BalanceState] = []
        self.restarts: list[DiagnosticStatus] = []
        client.node.create_subscription(BalanceState, "balance_state", self.states.append, 10)
        client.node.create_subscription(DiagnosticArray, "diagnostics", lambda msg: self.restarts.extend(
            s for s in msg.status if s.name == "balance_monitor: process"), 100)
        poll_until(lambda: self.states, "balance_state from the first monitor", PATIENCE)

    def see_it_back(self, launcher: subprocess.Popen, monitor: int, name: str) -> None:
        """``monitor``, the process of the monitor (a container: ``name``), was killed by
        SIGKILL: the launcher said so and restarted it, balance_state flows from the new
        process, and the launcher goes on."""
        poll_until(lambda: f"{name} restarted" in output(launcher), "the monitor restarted", PATIENCE)
        text = output(launcher)
        assert re.search(rf"{name} \(process {monitor}, hosting [a-z_, ]*balance_monitor[a-z_, ]*\) was killed by "
                         r"SIGKILL; restarting it in", text), text[-3000:]
        before = len(self.states)
        try:
            poll_until(lambda: len(self.states) > before, "balance_state from the restarted monitor", PATIENCE)
        except RobotClientError as error:  # say which side stopped: the robot, or the monitor
            try:
                self.client.wait_for_joint_states(5.0)
                robot = "joint_states still flow"
            except RobotClientError:
                robot = "no joint_states either: the robot stopped publishing"
            raise AssertionError(f"{error}; {robot}\n{output(launcher)[-6000:]}") from None
        assert launcher.poll() is None and monitor not in child_processes(launcher.pid)
        assert node_process(child_processes(launcher.pid), "balance_monitor") != monitor
        poll_until(lambda: self.restarts, "the restarted monitor's report on diagnostics", PATIENCE)
        assert self.restarts[0].level == DiagnosticStatus.WARN
        assert f"process {monitor} was killed by SIGKILL" in self.restarts[0].message


def kill_the_monitor_and_see_it_back(launcher: subprocess.Popen, nodes: list[int], client: RobotClient) -> None:
    """SIGKILL the balance monitor: the launcher says so and restarts it, and balance_state
    flows again from the new process, while the launcher and its driver go on."""
    watch = MonitorWatch(client)
    monitor = node_process(nodes, "balance_monitor")
    name = process_name(monitor)  # the container that hosts it
    os.kill(monitor, signal.SIGKILL)
    watch.see_it_back(launcher, monitor, name)


def kill_the_driver_and_see_the_graph_end(launcher: subprocess.Popen, driver: str) -> None:
    """SIGKILL the driver: the launcher says so, stops every other node and fails."""
    nodes = child_processes(launcher.pid)
    os.kill(node_process(nodes, driver), signal.SIGKILL)
    assert launcher.wait(PATIENCE) == 1
    assert f"{driver} was killed by SIGKILL: stopping the graph" in output(launcher)
    poll_until(lambda: not any(is_running(pid) for pid in nodes), "every node process gone", PATIENCE)


def test_a_dying_observer_leaves_the_real_robot_held_and_comes_back(emulator):
    """On the emulated bus: the servos' Torque Enable stays on while the balance monitor is
    killed and restarted; killing the hardware node then ends the graph."""
    command = ["humanoid", "real", "--robot", "bioloid", "--port", emulator.port]
    with launched(command, len(real_nodes("bioloid"))) as (launcher, nodes, client):
        assert emulator.torques() == [1] * 18
        kill_the_monitor_and_see_it_back(launcher, nodes, client)
        assert emulator.torques() == [1] * 18  # held all along: the hardware node never stopped
        client.wait_for_joint_states(PATIENCE)
        kill_the_driver_and_see_the_graph_end(launcher, "humanoid_hw")


def test_a_dying_recorder_leaves_a_readable_bag_and_the_robot_running_and_its_monitor_comes_back(tmp_path):
    """``--record``: the recorder is hosted in the graph's container, beside the balance
    monitor; killed outright with it, the recorder is not started again (a new process cannot
    finish its bag): the launcher makes what it wrote readable at once, restarts the container
    without it (the monitor back: balance_state again, the restart reported on diagnostics),
    and the graph goes on, serving (no duration given) until SIGINT (Ctrl-C) stops it cleanly
    and its nodes with it. (The monitor's death on the real robot, the servos held: the
    hardware test's.)"""
    from humanoid_tools.recording import Bag
    from humanoid_tools.recording.reindex import reindex

    bag = tmp_path / "run"
    command = ["humanoid", "sim", "--robot", "bioloid", "--record", str(bag)]
    with launched(command, len(sim_nodes("bioloid"))) as (launcher, nodes, client):
        def joint_states_on_disk() -> int:
            """joint_states in what the recorder has written so far: a copy of the bag, made whole."""
            copy = Path(tempfile.mkdtemp(prefix="copy", dir=tmp_path))
            for file in bag.glob("*.mcap"):
                shutil.copyfile(file, copy / file.name)
            return reindex(copy).messages.get("/joint_states", 0) if any(copy.glob("*.mcap")) else 0

        monitor = MonitorWatch(client)
        poll_until(joint_states_on_disk, "joint_states in the bag's written chunks", PATIENCE, interval=0.5)
        recorder = node_process(nodes, RECORDER_NODE)
        name = process_name(recorder)
        assert node_process(nodes, "balance_monitor") == recorder  # one container hosts both
        os.kill(recorder, signal.SIGKILL)
        poll_until(lambda: "the graph goes on without recording" in output(launcher), "the bag made readable",
                   PATIENCE)
        poll_until(lambda: f"{name} restarted" in output(launcher), "the container restarted", PATIENCE)
        text = output(launcher)
        assert re.search(rf"{name} \(process {recorder}, hosting {RECORDER_NODE}[a-z_, ]*\) was killed by SIGKILL; "
                         r"restarting it", text), text[-3000:]
        with Bag(bag) as recorded:
            assert recorded.counts.get("/joint_states", 0) > 0, recorded.counts
        assert node_process(child_processes(launcher.pid), RECORDER_NODE) != recorder
        poll_until(lambda: f"{RECORDER_NODE} is not started again in a restarted container" in output(launcher),
                   "the restarted container without the recorder", PATIENCE)
        monitor.see_it_back(launcher, recorder, name)
        client.wait_for_joint_states(PATIENCE)  # the robot still served
        assert launcher.poll() is None and recorder not in child_processes(launcher.pid)
        stop_launcher(launcher, child_processes(launcher.pid), signal.SIGINT)
