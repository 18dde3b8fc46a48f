"""``humanoid emulate`` as a process, the way a user runs it."""

import argparse
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import serial
from dynamixel_sdk import COMM_SUCCESS, PacketHandler, PortHandler

from humanoid_hw import DynamixelBus, PortLostError
from humanoid_hw.emulator import OUTPUT_FLUSH_WARNING, cli, instruction_packet, status_packet

TIMEOUT = 60


def start_emulator(*args):
    process = subprocess.Popen([sys.executable, "-m", "humanoid_hw.emulator", *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ready, _, _ = select.select([process.stdout], [], [], TIMEOUT)
    assert ready, "the emulator printed nothing"
    return process, process.stdout.readline().strip()


def ping_until_answered(packets: PacketHandler, port: PortHandler, servo_id: int) -> tuple[int, int]:
    """(model number, result) of pinging ``servo_id`` until it answers, or of the last ping once
    TIMEOUT s passed: on a loaded machine the emulator, a Python process, can answer after the
    SDK stopped waiting (seen: ID 18 after 0.5 s, in a clean-clone run on a slow host); a late
    answer read by the next ping is the same servo's."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        answer = packets.ping(port, servo_id)[:2]
        if answer[1] == COMM_SUCCESS or time.monotonic() > deadline:
            return answer


@pytest.mark.parametrize(("protocol", "model_number", "stop", "link"),
                         [(1, 12, signal.SIGTERM, False), (2, 1060, signal.SIGINT, True)])
def test_emulate_prints_the_port_first_and_serves_until_signalled(tmp_path, monkeypatch, protocol, model_number,
                                                                  stop, link):
    monkeypatch.setattr("dynamixel_sdk.port_handler.LATENCY_TIMER", 250)  # patient on a loaded machine
    extra = ["--link", str(tmp_path / "ttyDXL")] if link else []
    process, port_path = start_emulator("--robot", "bioloid", "--protocol", str(protocol), *extra)
    try:
        assert os.path.exists(port_path)
        assert port_path == (str(tmp_path / "ttyDXL") if link else os.path.realpath(port_path))
        port = PortHandler(port_path)
        assert port.openPort()
        try:
            packets = PacketHandler(float(protocol))
            assert [ping_until_answered(packets, port, i) for i in (1, 18)] == [(model_number, COMM_SUCCESS)] * 2
            assert packets.ping(port, 19)[1] != COMM_SUCCESS  # the Bioloid has IDs 1..18
        finally:
            port.closePort()
    finally:
        process.send_signal(stop)
        _, errors = process.communicate(timeout=TIMEOUT)
    assert process.returncode == 0, errors
    assert "emulating 18" in errors
    assert not os.path.exists(port_path)


def test_emulate_refuses_a_robot_without_dynamixels():
    result = subprocess.run([sys.executable, "-m", "humanoid_hw.emulator", "--robot", "hoap2"],
                            capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 2 and "no Dynamixel joint map" in result.stderr and result.stdout == ""


def may_raise_priority() -> bool:
    """Whether this user may lower a nice value to the emulator's (root, or a nice limit)."""
    import resource

    return os.geteuid() == 0 or resource.getrlimit(resource.RLIMIT_NICE)[0] >= 20 - cli.EMULATOR_NICE


@pytest.mark.parametrize("asked", [[], ["--nice", "0"]])
def test_emulate_runs_at_a_control_loop_s_priority_unless_told(asked):
    """Real servos answer whatever the host's load: the emulator runs ahead of the machine's
    other work (a driver's control loop's nice) unless ``--nice`` says otherwise; a user who
    may not raise it is told so in one line, and the bus is served all the same."""
    process, port_path = start_emulator("--robot", "bioloid", *asked)
    try:
        nice = os.getpriority(os.PRIO_PROCESS, process.pid)
        assert os.path.exists(port_path)
    finally:
        process.send_signal(signal.SIGTERM)
        _, errors = process.communicate(timeout=TIMEOUT)
    assert process.returncode == 0, errors
    if asked or may_raise_priority():
        assert nice == (0 if asked else cli.EMULATOR_NICE), errors
        assert "priority" not in errors
    else:
        assert nice == 0 and "cannot set the emulator's priority to nice -5" in errors, errors


def test_an_emulator_process_leads_its_session_at_that_priority():
    """``emulator_process`` (``humanoid real --emulate``, the tests, the benchmarks) starts the
    emulator in a session of its own, which gets the emulator's priority where the kernel
    schedules by session; the starting process's own session keeps its priority."""
    from humanoid_core.processes import child_processes
    from humanoid_hw.emulator import emulator_process

    own_group = Path("/proc/self/autogroup")
    before = own_group.read_text() if own_group.exists() else None
    with emulator_process("bioloid") as port_path:
        (pid,) = [child for child in child_processes(os.getpid())
                  if b"humanoid_hw.emulator" in Path(f"/proc/{child}/cmdline").read_bytes()]
        assert os.path.exists(port_path)
        assert os.getsid(pid) == pid
        group = Path(f"/proc/{pid}/autogroup")
        if may_raise_priority():
            assert os.getpriority(os.PRIO_PROCESS, pid) == cli.EMULATOR_NICE
            if group.exists():
                assert group.read_text().split()[-1] == str(cli.EMULATOR_NICE), group.read_text()
        if before is not None:
            assert own_group.read_text() == before


def test_emulate_exposes_add_arguments_and_run():
    emulate = argparse.ArgumentParser()
    cli.add_arguments(emulate)
    args = emulate.parse_args(["--robot", "bioloid", "--protocol", "2", "--baud", "57600", "--timing"])
    assert (args.robot, args.protocol, args.baud, args.timing) == ("bioloid", 2, 57600, True)
    assert callable(cli.run)


# -- fault commands on standard input ------------------------------------------------------
class EmulatorProcess:
    """``humanoid emulate`` in a child process, driven through its standard input."""

    def __init__(self, link):
        self.process = subprocess.Popen([sys.executable, "-m", "humanoid_hw.emulator", "--robot", "bioloid",
                                         "--link", str(link)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        self.port = self.line()

    def line(self) -> str:
        ready, _, _ = select.select([self.process.stdout], [], [], TIMEOUT)
        assert ready, "the emulator printed nothing"
        return self.process.stdout.readline().strip()

    def command(self, text: str) -> str:
        """Send one command; its answer comes once the fault is in force."""
        self.process.stdin.write(text + "\n")
        self.process.stdin.flush()
        return self.line()

    def stop(self) -> tuple[int, str]:
        if not self.process.stdin.closed:
            self.process.stdin.close()
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=TIMEOUT)
        errors = self.process.stderr.read()
        self.process.stdout.close()
        self.process.stderr.close()
        return code, errors


@pytest.fixture
def emulate(tmp_path):
    process = EmulatorProcess(tmp_path / "ttyDXL")
    yield process
    if process.process.poll() is None:
        process.stop()


def bus_on(port: str) -> DynamixelBus:
    bus = DynamixelBus(port, 1_000_000, 1, retries=3, latency_timer_ms=50.0)  # patient on a loaded machine
    bus.open()
    return bus


def test_emulate_injects_each_fault_from_standard_input(emulate):
    bus = bus_on(emulate.port)
    try:
        assert bus.ping(3).ok
        assert emulate.command("silence 3") == "ok: servo 3 silent"
        assert not bus.ping(3, retries=0).ok and bus.ping(4).ok
        assert emulate.command("answer 3") == "ok: servo 3 answers"
        assert bus.ping(3).ok

        assert emulate.command("corrupt 2 4") == "ok: the next 2 status packet(s) of servo 4 corrupted"
        corrupt = bus.traffic.corrupt
        reply = bus.read(4, 36, 8)
        assert reply.ok and reply.attempts == 3 and bus.traffic.corrupt - corrupt == 2

        assert emulate.command("error 9 overload") == "ok: servo 9 reports overload"
        assert "overload" in bus.status_errors(bus.read(9, 36, 8).error)
        assert emulate.command("get 9 torque_limit") == "ok: servo 9 torque_limit = 0"  # the AX shut itself down
        assert emulate.command("clear 9") == "ok: servo 9 errors cleared"
        assert bus.read(9, 36, 8).error == 0

        assert emulate.command("place 5 700") == "ok: servo 5 placed at 700"
        assert int.from_bytes(bus.read(5, 36, 2).data, "little") == 700

        assert emulate.command("faults").startswith("ok: silent: []")
        assert emulate.command("vanish").startswith("ok:")
        assert not os.path.exists(emulate.port)
        with pytest.raises(PortLostError):
            bus.read(1, 36, 8)
        assert emulate.command("reappear").startswith("ok:")
        bus.open()
        assert bus.ping(1).ok
    finally:
        bus.close()


def test_emulate_answers_a_bad_command_with_a_reason_and_serves_on(emulate):
    answers = {command: emulate.command(command) for command in (
        "frobnicate", "silence 99", "silence x", "error 9 bogus", "corrupt 0", "delay 5 -1", "place 5 5000",
        "get 5 nonsense", "silence")}
    assert answers["frobnicate"].startswith("error: unknown command 'frobnicate' (commands: silence, answer")
    assert answers["silence 99"] == "error: 'silence 99': no servo 99 on this bus (IDs 1..18)"
    assert answers["silence x"] == "error: 'silence x': servo ID must be a number, not 'x'"
    assert "cannot report ['bogus']" in answers["error 9 bogus"] and "overload" in answers["error 9 bogus"]
    assert answers["corrupt 0"] == "error: 'corrupt 0': COUNT must be at least 1, not 0"
    assert answers["delay 5 -1"] == "error: 'delay 5 -1': a reply delay must be >= 0 s, not -1.0"
    assert answers["place 5 5000"] == "error: 'place 5 5000': RAW must be within 0..1023, not 5000"
    assert answers["get 5 nonsense"].startswith("error: 'get 5 nonsense': AX-12 has no item 'nonsense'")
    assert answers["silence"] == "error: 'silence': usage: silence ID"
    assert emulate.command("faults") == "ok: silent: []; corrupt: {}; errors: {}; delays: {}; present: True"
    bus = bus_on(emulate.port)
    try:
        assert bus.ping(5).ok
    finally:
        bus.close()


def test_emulate_serves_on_after_its_input_ends(emulate):
    assert emulate.command("silence 2") == "ok: servo 2 silent"
    emulate.process.stdin.close()  # end of input: the faults stay, the bus is served
    bus = bus_on(emulate.port)
    try:
        assert bus.ping(1).ok and not bus.ping(2, retries=0).ok
    finally:
        bus.close()
    code, errors = emulate.stop()
    assert code == 0, errors


def test_emulate_replaces_the_link_a_killed_emulator_left(tmp_path):
    link = tmp_path / "ttyDXL"
    link.symlink_to("/dev/pts/99999")  # the pseudo-terminal of an emulator killed outright: gone
    process = EmulatorProcess(link)
    try:
        assert process.port == str(link)
        assert os.readlink(link) != "/dev/pts/99999" and os.path.exists(link)  # the live pseudo-terminal
    finally:
        code, errors = process.stop()
    assert code == 0, errors
    assert not os.path.lexists(link)


def test_emulate_leaves_alone_what_took_its_link_s_place(emulate, tmp_path):
    """A file put in place of the emulator's link while it serves is neither deleted when the
    adapter is unplugged or the emulator stops, nor replaced when the adapter is plugged back."""
    mine = tmp_path / "mine"
    mine.write_text("mine")
    os.replace(mine, emulate.port)
    assert emulate.command("vanish").startswith("ok:")
    assert Path(emulate.port).read_text() == "mine"
    answer = emulate.command("reappear")
    assert answer == (f"error: 'reappear': not plugged back: {emulate.port} exists and is not a link an emulator "
                      f"made: not replacing it")
    code, errors = emulate.stop()
    assert code == 0, errors
    assert Path(emulate.port).read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ttyDXL"]  # no temporary link left


def test_emulate_help_lists_the_fault_commands():
    result = subprocess.run([sys.executable, "-m", "humanoid_hw.emulator", "--help"], capture_output=True, text=True,
                            timeout=TIMEOUT)
    assert result.returncode == 0
    for command in ("silence ID", "answer ID", "corrupt COUNT [ID]", "error ID NAME", "clear ID", "vanish",
                    "reappear", "delay ID SECONDS"):
        assert command in result.stdout


def test_emulate_warns_once_when_a_client_discards_its_unsent_output(emulate):
    """The project's driver never discards its output: no warning. A client that does (as
    pypot does before every packet) gets one line on standard error, however often it does."""
    bus = bus_on(emulate.port)
    try:
        assert bus.ping(1).ok and bus.read(2, 36, 8).ok
    finally:
        bus.close()
    ping = instruction_packet(1, 1, 0x01)
    with serial.Serial(emulate.port, 1_000_000, timeout=TIMEOUT) as line:
        for _ in range(3):
            line.reset_output_buffer()
            line.write(ping)
            assert line.read(6) == status_packet(1, 1, 0)  # answered after the flush was seen
    code, errors = emulate.stop()
    assert code == 0, errors
    warnings = [text for text in errors.splitlines() if "warning" in text]
    assert warnings == [f"humanoid emulate: warning: {OUTPUT_FLUSH_WARNING}"]
