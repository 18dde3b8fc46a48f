#!/usr/bin/env bash
# The whole test suite: lint, then every package's tests and the system tests.
#
# Without arguments the tests run as two sessions side by side, one per core: the system
# tests (marker `system`: ROS graphs in child processes, one graph at a time) and the
# others (in-process: models, the loop, drivers on the emulator, commands' bad input).
# The second's report follows the first's; the status is non-zero when either failed.
# With arguments (paths, -k, ...) this is plain `pytest ARGS`.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "[test] ruff check"
ruff check .
if [[ $# -gt 0 ]]; then
    echo "[test] pytest $*"
    exec pytest "$@"
fi

others_dir=$(mktemp -d -t humanoid-tests-XXXXXX)
others_pid=""
# the other session dies with this script, however it ends (its own children die with it)
trap '[[ -n "$others_pid" ]] && kill "$others_pid" 2>/dev/null; rm -rf "$others_dir"' EXIT
echo "[test] pytest -m 'not system' (in the background) and pytest -m system"
pytest -m "not system" --basetemp "$others_dir/tmp" > "$others_dir/report" 2>&1 &
others_pid=$!
status=0
pytest -m system || status=$?
others=0
wait "$others_pid" || others=$?
others_pid=""
echo "[test] the tests without a ROS graph (pytest -m 'not system'):"
cat "$others_dir/report"
if [[ $status -ne 0 || $others -ne 0 ]]; then
    echo "[test] FAILED: system tests exit $status, the others exit $others"
    exit 1
fi
