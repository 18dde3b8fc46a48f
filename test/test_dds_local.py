"""DDS stays on this machine: with a graph running, every socket of every node process is
on the loopback interface, except two send sockets that nothing reads.

``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` limits the peers a participant talks to, not
the interfaces its sockets listen on (without the loopback profile the domain's ports
are bound on 0.0.0.0). The Fast DDS profile ``humanoid_bringup/config/dds/fastdds_loopback.xml``
(shared memory + UDPv4 restricted to 127.0.0.1), set by conftest.py, scripts/run.sh and
scripts/env.sh, binds them to 127.0.0.1.

Not closed by any profile: with LOCALHOST, rmw_fastrtps appends a UDPv4 transport of its
own, with no interface list, to the participant's transports (in code, after the XML is
read). Its input ports fail to bind (the profile's transport holds them on 127.0.0.1); what
remains are its send sockets, on kernel-chosen ports: one bound on 0.0.0.0 (unicast sends)
and one on each other interface's address (multicast sends). Fast DDS never reads a send
socket: a datagram sent to one stays queued in the kernel (up to the socket's receive
buffer, then dropped) and is never parsed; the test sends one and sees it stay. Sockets
are read from the kernel's tables (/proc/net/udp, udp6, tcp, tcp6) through each node
process's descriptors; Unix-domain sockets are local by nature.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from proc_sockets import inet_sockets, is_loopback, process_sockets

from humanoid_control.ros import poll_until
from humanoid_sim import sim_nodes

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[1]

#: RTPS port mapping (DDS-RTPS 9.6.1.1): PB + DG * domain + offsets.
PORT_BASE, DOMAIN_GAIN = 7400, 250


def is_local_address(address: str) -> bool:
    """An address of one of this machine's interfaces (a socket can be bound to it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.bind((address, 0))
        except OSError:
            return False
    return True


def ephemeral_ports() -> range:
    low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    return range(low, high + 1)


def test_every_socket_of_every_node_is_on_loopback_but_unread_send_sockets(robot_graph):
    graph, client = robot_graph(sim_nodes("bioloid"))
    # every node up (a node still importing its libraries has no socket yet)
    poll_until(lambda: set(graph.processes) <= set(client.node.get_node_names()), "every node of the graph", 120.0)
    domain = int(os.environ["ROS_DOMAIN_ID"])
    domain_ports = range(PORT_BASE + DOMAIN_GAIN * domain, PORT_BASE + DOMAIN_GAIN * (domain + 1))
    send_sockets = []
    for name, process in graph.processes.items():
        sockets = process_sockets(process.pid)
        assert not [s for s in sockets if s.protocol == "tcp"], f"{name} has TCP sockets: {sockets}"
        assert [s for s in sockets if s.port in domain_ports and is_loopback(s.address)], \
            f"{name}: no socket on the DDS ports of domain {domain}: {sockets}"
        beyond = [s for s in sockets if not is_loopback(s.address)]
        for s in beyond:  # the rmw transport's send sockets: kernel-chosen ports, one per address
            assert s.port in ephemeral_ports() and s.port not in domain_ports, f"{name}: {s} is not a send socket"
            assert s.address == "0.0.0.0" or is_local_address(s.address), f"{name}: {s}"
        addresses = [s.address for s in beyond]
        assert len(addresses) == len(set(addresses)), f"{name} has more than one socket per address: {beyond}"
        send_sockets += [s for s in beyond if s.address == "0.0.0.0"]
    # nothing reads them: a datagram sent (over loopback) to each stays queued while the graph runs
    assert send_sockets, "no send socket on 0.0.0.0 (rmw_fastrtps no longer adds its transport?)"
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        for s in send_sockets:
            sender.sendto(b"not for DDS", ("127.0.0.1", s.port))
    for _ in range(20):  # messages go on flowing: the nodes' receive threads are busy
        client.wait_for_joint_states(30.0)
    queued = {s.port: q.queued for s in send_sockets
              for q in inet_sockets().values() if q.port == s.port and q.address == "0.0.0.0"}
    assert all(queued.values()) and len(queued) == len(send_sockets), f"read by someone: {queued}"


def _run_sh(command: str, lock_folder: Path | None = None, domain: str | None = None) -> subprocess.CompletedProcess:
    """``scripts/run.sh`` running ``command``; its domains' lock files in ``lock_folder`` (its
    ``TMPDIR``), else the machine's; ``domain``: the HUMANOID_DOMAIN_ID it is given."""
    environment = {k: v for k, v in os.environ.items() if k != "HUMANOID_DOMAIN_ID"}
    if lock_folder is not None:
        environment["TMPDIR"] = str(lock_folder)
    if domain is not None:
        environment["HUMANOID_DOMAIN_ID"] = domain
    return subprocess.run([str(ROOT / "scripts" / "run.sh"), "bash", "-c", command], capture_output=True,
                          text=True, timeout=60, env=environment)


#: The one domain :func:`all_domains_chosen_but` leaves free.
FREE = 37


@contextlib.contextmanager
def all_domains_chosen_but(free: int, lock_folder: Path) -> Iterator[None]:
    """Every domain 1..100 but ``free`` locked as a run that chose it holds it (exclusively),
    in ``lock_folder`` (the runs' ``TMPDIR``), for the ``with`` block."""
    with contextlib.ExitStack() as held:
        for domain in range(1, 101):
            if domain != free:
                handle = held.enter_context(open(lock_folder / f"humanoid-ros-domain-{domain}.lock", "w"))
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        yield


def test_scripts_run_sh_takes_a_ros_domain_no_other_run_holds(tmp_path):
    """Two runs at once (a demo next to a test session, say) must never share a domain: run.sh
    takes the one domain left unlocked, and refuses when none is. The lock files are in a
    folder of the test's own (run.sh's ``TMPDIR``): the machine's other runs take and free
    domains meanwhile (the suite's other worker too), and one freed between the test's locking
    and run.sh's choice was taken instead, rightly."""
    with all_domains_chosen_but(FREE, tmp_path):
        result = _run_sh("echo $ROS_DOMAIN_ID", tmp_path)
        assert result.returncode == 0, result.stderr
        assert int(result.stdout) == FREE
        inner = _run_sh(f"{ROOT}/scripts/run.sh true", tmp_path)  # the outer run holds FREE while its command lives
        assert inner.returncode == 1
        assert "every ROS domain 1..100 is locked" in inner.stderr


def test_a_domain_given_meets_the_runs_given_it_and_never_a_run_that_chose_its_own(tmp_path):
    """HUMANOID_DOMAIN_ID is how two commands meet (a simulation, a controller in another
    terminal): the runs given one domain share it. A run that chose its domain (a test session,
    a demo) keeps it to itself: a run given that domain is refused in one line and runs
    nothing (one did once join a test session's graph, whose fall manager's get-up goal two
    trajectory generators then accepted), and a run choosing a domain passes over one a given
    run holds."""
    with all_domains_chosen_but(FREE, tmp_path):
        refused = _run_sh("echo ran", tmp_path, domain="38")
        assert refused.returncode == 1 and refused.stdout == "", refused
        assert "ROS domain 38 is held by a run that chose it for itself" in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
        inner_given = f"HUMANOID_DOMAIN_ID={FREE} {ROOT}/scripts/run.sh bash -c 'echo $ROS_DOMAIN_ID'"
        inner_chosen = f"env -u HUMANOID_DOMAIN_ID {ROOT}/scripts/run.sh true"
        outer = _run_sh(f"{inner_given} && {inner_chosen}; echo chosen=$?", tmp_path, domain=str(FREE))
        assert outer.returncode == 0, outer.stderr
        lines = outer.stdout.split()
        assert lines[0] == str(FREE)  # the second run given the domain meets the first there
        assert lines[-1] == "chosen=1" and "every ROS domain 1..100 is locked" in outer.stderr


@pytest.mark.parametrize("given", ["abc", "-3", "233"])
def test_a_domain_given_that_is_no_ros_domain_is_refused(given):
    result = _run_sh("echo ran", domain=given)
    assert result.returncode == 2 and result.stdout == ""
    assert f"HUMANOID_DOMAIN_ID must be a ROS domain (0..232), got '{given}'" in result.stderr


def test_service_answers_wait_for_a_client_discovered_late():
    """rmw_fastrtps drops a service's (or an action's) answer when the client's response
    reader is not discovered within the response writer's max_blocking_time (Fast DDS's
    default 100 ms: answers were lost under load, `humanoid bench service-answers`). The
    profile every process gets names the writer profile rmw_fastrtps looks up for service
    responses ("service") with the wait the clients' re-asking intervals are built on."""
    import xml.etree.ElementTree as ElementTree

    from humanoid_control.ros import ASK_AGAIN_AFTER, SERVER_ANSWER_WAIT

    ns = {"dds": "http://www.eprosima.com"}
    profile = ROOT / "humanoid_bringup" / "config" / "dds" / "fastdds_loopback.xml"
    assert os.environ["FASTDDS_DEFAULT_PROFILES_FILE"] == str(profile)
    writers = {w.get("profile_name"): w for w in ElementTree.parse(profile).getroot().iterfind(
        "dds:profiles/dds:data_writer", ns)}
    blocking = writers["service"].find("dds:qos/dds:reliability/dds:max_blocking_time", ns)
    seconds = int(blocking.findtext("dds:sec", "0", ns)) + int(blocking.findtext("dds:nanosec", "0", ns)) * 1e-9
    assert seconds == SERVER_ANSWER_WAIT
    assert seconds >= 1.0  # well above Fast DDS's 100 ms
    assert seconds < ASK_AGAIN_AFTER  # a question asked again does not queue behind a server still waiting
