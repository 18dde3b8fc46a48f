"""``humanoid bench graph``'s memory total: the physical pages a set of processes holds, each
counted once however many of them map it (a sum of RSS counts a shared library once per
process; a sum of PSS gives away the share held by processes outside the set)."""

from __future__ import annotations

import os
import signal

from humanoid_experiments.bench import graph as bench_graph

#: Present pages of the same process read at two moments differ by what it touched between
#: (reading the page frames itself allocates a few MB).
SAME_PROCESS = 0.1


def test_the_pages_of_processes_that_share_them_are_counted_once():
    rss, _pss = bench_graph.memory_mb(os.getpid())
    alone = bench_graph.resident_once_mb([os.getpid()])
    if os.geteuid() != 0:  # page frames read as zeros without the privilege: no figure, not a wrong one
        assert alone is None
        return
    assert abs(alone - rss) <= SAME_PROCESS * rss, (alone, rss)
    twice = bench_graph.resident_once_mb([os.getpid(), os.getpid()])
    assert abs(twice - alone) <= SAME_PROCESS * alone, (twice, alone)  # not twice as much
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child shares the parent's pages until either writes them
        os.close(read)
        os.write(write, b"x")
        signal.pause()
    try:
        os.close(write)
        assert os.read(read, 1) == b"x"
        child_rss, _ = bench_graph.memory_mb(child)
        both = bench_graph.resident_once_mb([os.getpid(), child])
        assert max(rss, child_rss) * (1 - SAME_PROCESS) <= both < 0.75 * (rss + child_rss), (both, rss, child_rss)
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        os.close(read)
