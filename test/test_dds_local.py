"""DDS stays on this machine: with a graph running, the domain's DDS ports of every node
process are bound to the loopback interface only.

``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` limits the peers a participant talks to, not
the interfaces its sockets listen on (without the loopback profile the domain's ports
are bound on 0.0.0.0 and senders on the machine's external address). The Fast DDS
profile ``humanoid_bringup/config/dds/fastdds_loopback.xml`` (shared memory + UDPv4
restricted to 127.0.0.1), set by conftest.py, scripts/run.sh and scripts/env.sh, binds
them to 127.0.0.1. Sockets are read from the kernel's tables (/proc/net/udp, udp6).

Left out on purpose: with LOCALHOST, rmw_fastrtps adds a UDPv4 transport of its own,
without an interface list, whose two send sockets (ephemeral ports, not listened to)
are bound on 0.0.0.0 and the external address (docs/ros_and_dds.md, a known limit).
"""

from __future__ import annotations

import fcntl
import ipaddress
import os
import socket
import struct
import subprocess
import tempfile
from pathlib import Path

import pytest

from humanoid_bringup.graphs import sim_nodes
from humanoid_control.ros.robot_client import poll_until

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[1]

#: RTPS port mapping (DDS-RTPS 9.6.1.1): PB + DG * domain + offsets.
PORT_BASE, DOMAIN_GAIN = 7400, 250


def udp_sockets() -> dict[int, tuple[str, int]]:
    """Socket inode -> (local address, port) for every UDP socket on the machine."""
    found = {}
    for table, family in (("/proc/net/udp", socket.AF_INET), ("/proc/net/udp6", socket.AF_INET6)):
        if not Path(table).exists():
            continue
        for row in Path(table).read_text().splitlines()[1:]:
            fields = row.split()
            address, port = fields[1].split(":")
            raw = bytes.fromhex(address)
            # the kernel prints each 32-bit word in host byte order
            words = struct.unpack(f"<{len(raw) // 4}I", raw)
            packed = b"".join(struct.pack(">I", w) for w in words)
            found[int(fields[9])] = (socket.inet_ntop(family, packed), int(port, 16))
    return found


def socket_inodes(pid: int) -> set[int]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[8:-1]))
    return inodes


def is_loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    return ip.is_loopback or (ip.version == 6 and ip.ipv4_mapped is not None and ip.ipv4_mapped.is_loopback)


def test_the_graphs_dds_ports_are_bound_to_loopback_only(robot_graph):
    graph, client = robot_graph(sim_nodes("bioloid"))
    # every node up (a node still importing its libraries has no socket yet)
    poll_until(lambda: set(graph.processes) <= set(client.node.get_node_names()), "every node of the graph", 120.0)
    domain = int(os.environ["ROS_DOMAIN_ID"])
    domain_ports = range(PORT_BASE + DOMAIN_GAIN * domain, PORT_BASE + DOMAIN_GAIN * (domain + 1))
    table = udp_sockets()
    for name, process in graph.processes.items():
        sockets = [table[i] for i in socket_inodes(process.pid) if i in table]
        dds = [(address, port) for address, port in sockets if port in domain_ports]
        assert dds, f"{name}: no socket on the DDS ports of domain {domain}: {sockets}"
        elsewhere = [f"{address}:{port}" for address, port in dds if not is_loopback(address)]
        assert not elsewhere, f"{name} has DDS ports bound beyond the loopback interface: {elsewhere}"


def _run_sh(command: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "HUMANOID_DOMAIN_ID"}
    return subprocess.run([str(ROOT / "scripts" / "run.sh"), "bash", "-c", command], capture_output=True,
                          text=True, timeout=60, env=environment)


def test_scripts_run_sh_takes_a_ros_domain_no_other_run_holds():
    """Two runs at once (a demo next to a test session, say) must never share a domain: run.sh
    takes the one domain left unlocked, and refuses when none is."""
    held, free = [], None
    try:
        for domain in range(1, 101):  # lock every domain nobody holds, but one
            handle = open(Path(tempfile.gettempdir()) / f"humanoid-ros-domain-{domain}.lock", "w")  # noqa: SIM115
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # this session's own, or another run's
                handle.close()
                continue
            if free is None:
                free = domain
                handle.close()
            else:
                held.append(handle)
        assert free is not None, "every domain is held by other runs"
        result = _run_sh("echo $ROS_DOMAIN_ID")
        assert result.returncode == 0, result.stderr
        assert int(result.stdout) == free
        inner = _run_sh(f"{ROOT}/scripts/run.sh true")  # the outer run holds `free` while its command lives
        assert inner.returncode == 1
        assert "every ROS domain 1..100 is locked" in inner.stderr
    finally:
        for handle in held:
            handle.close()
