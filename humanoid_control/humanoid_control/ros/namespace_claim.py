"""A robot's namespace claimed on this machine for as long as the robot's loop runs.

DDS discovery has no end to wait for: a look at the graph (:func:`~humanoid_control.ros.namespaces.robot_publishers`)
that sees no robot in a namespace may only be early (CI's slow machine took more than 3 s to
show a running robot's nodes to a new participant, and a second robot went into a taken
namespace). Robots on one machine need no discovery to know of each other: the loop of each
(the process that publishes its ``joint_states``) claims ``(ROS_DOMAIN_ID, namespace)`` with an
advisory lock on a file, which the kernel frees when the process ends however it ends (no
stale claim after a crash). The graph look remains for robots on other machines, or started
by other users (each user's claims are their own)."""

from __future__ import annotations

import fcntl
import os
import tempfile
from pathlib import Path
from typing import IO

__all__ = ["claim_namespace", "claims_folder", "namespace_holder"]

#: The claims this process holds, by file, and their holder: kept open (and so locked) until the
#: process ends.
_HELD: dict[Path, tuple[IO[str], str]] = {}


def claims_folder() -> Path:
    """Where this user's claims live (in the system's temporary folder: ``TMPDIR`` if set)."""
    return Path(tempfile.gettempdir()) / f"humanoid-namespaces-{os.getuid()}"


def _claim_file(namespace: str) -> Path:
    domain = os.environ.get("ROS_DOMAIN_ID") or "0"
    return claims_folder() / f"domain-{domain}-{namespace.strip('/').replace('/', '~')}.lock"


def _locked(path: Path) -> tuple[IO[str] | None, str | None]:
    """The file at ``path`` opened and locked (and no holder), or no file and its holder's name."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    handle = path.open("a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "a robot starting"
        handle.close()
        return None, holder
    return handle, None


def claim_namespace(namespace: str, holder: str) -> str | None:
    """Claim ``namespace`` on this machine's DDS domain, for ``holder`` (how others are told of
    it): ``None`` when claimed (until this process ends), else who holds it. A process asking
    again for a namespace it holds keeps it."""
    path = _claim_file(namespace)
    if path in _HELD:
        return None
    handle, other = _locked(path)
    if handle is None:
        return other
    handle.seek(0)
    handle.truncate()
    handle.write(holder)
    handle.flush()
    _HELD[path] = handle, holder
    return None


def namespace_holder(namespace: str) -> str | None:
    """Who holds ``namespace`` on this machine's DDS domain, or ``None`` when it is free (a
    look: the namespace is not claimed by it)."""
    path = _claim_file(namespace)
    if path in _HELD:
        return _HELD[path][1]
    handle, other = _locked(path)
    if handle is not None:
        handle.close()
    return other
