#!/usr/bin/env bash
# The whole test suite: lint, then every package's tests and the system tests.
# Tests run in TEST_WORKERS processes (default 2), a file per worker at a time, each worker in
# a ROS domain of its own (conftest.py); TEST_WORKERS=0 runs them in this process.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "[test] ruff check"
ruff check .
echo "[test] pytest"
workers=${TEST_WORKERS:-2}
if [ "$workers" = 0 ]; then
  exec pytest "$@"
fi
exec pytest -n "$workers" --dist loadfile "$@"
