"""A robot's namespace claimed on this machine (``humanoid_control.ros.namespace_claim``): what
refuses a second robot into a taken namespace without waiting on DDS discovery. The holder is
another process here, as a running robot's loop is."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import pytest

from humanoid_control.ros import claim_namespace, namespace_holder

#: A process that claims the namespace of its first argument, says so, and holds it until its
#: standard input closes.
HOLDER = """
import sys
from humanoid_control.ros import claim_namespace
print(claim_namespace(sys.argv[1], "/a/humanoid_sim_loop driving bioloid") or "claimed", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def private_claims(tmp_path, monkeypatch):
    """Claims in a folder of the test's own, on a domain of its own (as the holder sees them)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setenv("ROS_DOMAIN_ID", "17")
    return dict(os.environ)


def hold(namespace: str, environment: dict[str, str]) -> subprocess.Popen:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, namespace], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=environment)
    assert holder.stdout.readline().strip() == "claimed"
    return holder


def test_a_namespace_held_by_a_running_process_is_taken_and_free_once_it_ends(private_claims):
    assert namespace_holder("/a") is None
    holder = hold("/a", private_claims)
    try:
        assert namespace_holder("/a") == "/a/humanoid_sim_loop driving bioloid"
        assert claim_namespace("/a", "test") == "/a/humanoid_sim_loop driving bioloid"
        assert namespace_holder("/b") is None and namespace_holder("/a/b") is None
    finally:
        holder.kill()  # however it ends: the kernel frees the claim
        holder.wait()
        holder.stdout.close()
        holder.stdin.close()
    assert namespace_holder("/a") is None


def test_claims_are_per_dds_domain(private_claims, monkeypatch):
    holder = hold("/a", private_claims)
    try:
        monkeypatch.setenv("ROS_DOMAIN_ID", "18")
        assert namespace_holder("/a") is None
    finally:
        holder.stdin.close()
        holder.wait()
        holder.stdout.close()


def test_a_process_keeps_the_namespace_it_claimed_when_it_asks_again(private_claims):
    assert claim_namespace("/c", "first") is None
    assert claim_namespace("/c", "second") is None
    assert namespace_holder("/c") == "first"
