"""The local Ray instance: its servers listen on the loopback interface only (Ray's own
default is every interface, at the machine's network address), and its workers run at the
command's own priority (niceness 0, not Ray's 15) unless the environment says otherwise: an
evaluation must not starve behind whatever else the user's session runs."""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.system

#: Started in a process of its own (a Ray instance per test process would outlive the test's
#: other Ray users): the workers' niceness, and the addresses every process of the instance
#: (the owner's marked processes) listens on, read from /proc.
INSTANCE = """
import json, os
from humanoid_experiments import local_ray, marked_processes
instance = local_ray.start(1)
import ray
niceness = ray.get(ray.remote(lambda: os.nice(0)).remote())
print(json.dumps({"niceness": niceness, "pids": marked_processes(os.getpid())}))
import sys; sys.stdout.flush(); sys.stdin.readline()
instance.stop()
"""


def listening(pid: int) -> list[str]:
    """The local addresses of the TCP sockets ``pid`` listens on (from /proc)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = []
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # LISTEN
                found.append(address(fields[1].split(":")[0]))
    return found


def address(hex_address: str) -> str:
    """/proc/net/tcp's address (32-bit words in host order, little-endian here) as text."""
    raw = bytes.fromhex(hex_address)
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    return str(ipaddress.ip_address(words))


def run_instance(environment: dict[str, str]) -> tuple[dict, dict[int, list[str]]]:
    env = {key: value for key, value in os.environ.items() if key != "RAY_worker_niceness"} | environment
    process = subprocess.Popen([sys.executable, "-c", INSTANCE], env=env, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        report = json.loads(process.stdout.readline() or "{}")
        sockets = {pid: listening(pid) for pid in report.get("pids", []) if Path(f"/proc/{pid}").exists()}
        process.stdin.write("\n")
        process.stdin.flush()
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0 and report, stderr[-3000:]
    return report, sockets


def test_the_local_instance_listens_on_loopback_only_and_its_workers_at_the_commands_niceness():
    report, sockets = run_instance({})
    assert report["niceness"] == os.nice(0)
    addresses = {a for found in sockets.values() for a in found}
    assert addresses, f"no listening socket found among {len(sockets)} processes of the instance"
    assert all(ipaddress.ip_address(a).is_loopback or (ipaddress.ip_address(a).version == 6 and
                                                       ipaddress.ip_address(a).ipv4_mapped is not None and
                                                       ipaddress.ip_address(a).ipv4_mapped.is_loopback)
               for a in addresses), sockets


def test_the_environment_may_put_the_workers_in_the_background():
    report, _ = run_instance({"RAY_worker_niceness": "15"})
    assert report["niceness"] == os.nice(0) + 15
