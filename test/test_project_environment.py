"""The environment ``scripts/env.sh`` gives every process of the project (``scripts/run.sh``
sources it: ``make demo``, ``make test``, CI)."""

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_bytecode_is_cached_even_where_the_environment_forbids_it():
    """An environment with PYTHONDONTWRITEBYTECODE (some sandboxes and CI images) made every
    interpreter compile every module again: about 5 CPU-seconds more per simulated graph
    started (docs/graph_cost.md, "Bytecode"). Under run.sh the interpreter writes its cache."""
    environment = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    environment.pop("HUMANOID_DOMAIN_ID", None)
    result = subprocess.run([str(ROOT / "scripts" / "run.sh"), "python", "-c",
                             "import sys; print(sys.flags.dont_write_bytecode)"],
                            capture_output=True, text=True, timeout=60, env=environment)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0"
