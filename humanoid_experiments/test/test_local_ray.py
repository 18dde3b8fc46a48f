"""The local Ray instance: its sockets are on the loopback interface only (Ray's own default
puts its servers on every interface, at the machine's network address), and its workers run at the
command's own priority (niceness 0, not Ray's 15) unless the environment says otherwise: an
evaluation must not starve behind whatever else the user's session runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from proc_sockets import is_loopback, process_sockets

pytestmark = pytest.mark.system

#: Started in a process of its own (a Ray instance per test process would outlive the test's
#: other Ray users): the workers' niceness, and the addresses of every socket of every process
#: of the instance (the owner's marked processes, their sockets read from /proc).
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


def run_instance(environment: dict[str, str]) -> tuple[dict, dict[int, list[str]]]:
    env = {key: value for key, value in os.environ.items() if key != "RAY_worker_niceness"} | environment
    process = subprocess.Popen([sys.executable, "-c", INSTANCE], env=env, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        report = json.loads(process.stdout.readline() or "{}")
        sockets = {pid: [s.address for s in process_sockets(pid)] for pid in report.get("pids", [])
                   if Path(f"/proc/{pid}").exists()}
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
    assert addresses, f"no socket found among {len(sockets)} processes of the instance"
    assert all(is_loopback(a) for a in addresses), sockets


def test_the_environment_may_put_the_workers_in_the_background():
    report, _ = run_instance({"RAY_worker_niceness": "15"})
    assert report["niceness"] == os.nice(0) + 15


def test_a_second_instance_starts_in_the_same_process_and_one_after_a_foreign_import_is_refused():
    """Ray reads its single-machine mode when imported: a process that imported ray itself
    first would get an instance on every interface, so ``start`` refuses with the reason; one
    whose first instance set the mode may start another once that one stopped."""
    again = ("from humanoid_experiments import local_ray\nlocal_ray.start(1).stop()\nlocal_ray.start(1).stop()\n"
             "print('started twice')")
    refused = ("import ray\nfrom humanoid_experiments import local_ray\ntry:\n    local_ray.start(1)\n"
               "except RuntimeError as error:\n    print(error)")
    env = {key: value for key, value in os.environ.items() if key != "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"}
    twice = subprocess.run([sys.executable, "-c", again], env=env, capture_output=True, text=True, timeout=300,
                           check=False)
    assert twice.returncode == 0 and "started twice" in twice.stdout, twice.stderr[-3000:]
    foreign = subprocess.run([sys.executable, "-c", refused], env=env, capture_output=True, text=True, timeout=120,
                             check=False)
    assert "must come before `import ray`" in foreign.stdout, foreign.stderr[-3000:]
