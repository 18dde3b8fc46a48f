"""The local Ray instance's workers run at the command's own priority (niceness 0, not Ray's
15), unless the environment says otherwise: an evaluation must not starve behind whatever
else the user's session runs."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.system

WORKER_NICENESS = """
from humanoid_experiments import local_ray
ray_instance = local_ray.start(1)
import os, ray
print(ray.get(ray.remote(lambda: os.nice(0)).remote()))
ray_instance.stop()
"""


@pytest.mark.parametrize(("environment", "expected"), [({}, 0), ({"RAY_worker_niceness": "15"}, 15)])
def test_the_local_instances_workers_run_at_the_commands_niceness(environment, expected):
    env = {key: value for key, value in os.environ.items() if key != "RAY_worker_niceness"} | environment
    done = subprocess.run([sys.executable, "-c", WORKER_NICENESS], env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout.split()[-1]) == os.nice(0) + expected
