#!/usr/bin/env bash
# The whole test suite: lint, then every package's tests and the system tests.
# Tests run in TEST_WORKERS processes, a file per worker at a time, each worker in a ROS domain
# of its own (conftest.py); TEST_WORKERS=0 runs them in this process. Default: one more than
# the cores. A graph test waits on its nodes' processes (discovery, real-time spans, start and
# stop) part of its time: with one worker per core the 2-core machine stood idle 30-40 % of a
# run; with three it is 96 % busy and the run about a sixth shorter (docs/testing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "[test] ruff check"
ruff check .
echo "[test] pytest"
workers=${TEST_WORKERS:-$(( $(nproc) + 1 ))}
if [ "$workers" = 0 ]; then
  exec pytest "$@"
fi
# A worker that dies is not replaced: the run stops at once and reports the test it died in.
# pytest-xdist's loadfile scheduling, given a replacement, hands it the dead worker's finished
# files as empty work and every worker then waits for ever (pytest-xdist issues 784 and 1378;
# a run here beside two CPU hogs hung so until it was killed).
exec pytest -n "$workers" --dist loadfile --max-worker-restart=0 "$@"
