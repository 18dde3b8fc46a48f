"""CPUs claimed by processes (``humanoid_core.processes.cpu_claim``): no two living processes
hold one CPU, and a claim ends with its process. Real processes, real lock files (in a
directory of the test's own, apart from the machine's claims)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

CLAIMER = ("import sys; from pathlib import Path; from humanoid_core.processes import claim_cpu; "
           "print(claim_cpu(Path(sys.argv[1])), flush=True); sys.stdin.read()")


@contextmanager
def claimer(claims: Path) -> Iterator[int | None]:
    """A process that claims a CPU in ``claims`` and holds it until its standard input closes;
    the CPU it got (None: none)."""
    process = subprocess.Popen([sys.executable, "-c", CLAIMER, str(claims)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    try:
        said = process.stdout.readline().strip()
        assert said, f"the claimer said nothing (exit {process.poll()})"
        yield None if said == "None" else int(said)
    finally:
        process.stdin.close()
        process.wait(30.0)


def test_each_living_claimer_gets_a_cpu_of_its_own_until_none_is_left(tmp_path):
    allowed = os.sched_getaffinity(0)
    with ExitStack() as stack:
        got = [stack.enter_context(claimer(tmp_path)) for _ in range(len(allowed) + 1)]
    if len(allowed) < 2:  # nothing to choose between: nobody is pinned
        assert got == [None, None]
    else:
        assert sorted(got[:-1]) == sorted(allowed) and got[-1] is None


def test_a_claim_ends_with_its_process(tmp_path):
    """Every CPU claimed, the claimers gone: every CPU can be claimed again."""
    allowed = os.sched_getaffinity(0)
    for _ in range(2):
        with ExitStack() as stack:
            got = [stack.enter_context(claimer(tmp_path)) for _ in allowed]
        assert sorted(got) == sorted(allowed) if len(allowed) > 1 else got == [None]
