"""A pytest session of its own, with this project's conftest as its plugin: for the tests of
what the conftest does to a run (test_left_behind, test_failure_summary)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def inner_pytest(folder: Path, *arguments: str, variables: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """A pytest session of its own in ``folder``, this project's conftest its plugin, a grace of
    1 s for what its tests leave running; ``variables``: more of its environment."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HUMANOID_TEST_SESSION"))}
    environment |= {"PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "test"), environment.get("PYTHONPATH", "")]),
                    "HUMANOID_LEFT_BEHIND_GRACE": "1"} | (variables or {})
    command = [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", "-c", os.devnull,
               "--rootdir", str(folder), *arguments]
    return subprocess.run(command, cwd=folder, env=environment, capture_output=True, text=True, timeout=120)
