#!/usr/bin/env bash
# The whole test suite: lint, then every package's tests and the system tests.
#
# Without arguments the tests run as two sessions side by side, one per core: the
# integration tests that bring up ROS graphs (markers `integration` and `system`: the
# top-level test/, one graph at a time) and every other test (the packages' own tests,
# some with a node or two, and the in-process ones: models, the loop, drivers on the
# emulator, the commands' bad input). The second's report follows the first's; the status
# is non-zero when either failed.
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
graphs="integration and system"
echo "[test] pytest -m 'not ($graphs)' (in the background) and pytest -m '$graphs'"
pytest -m "not ($graphs)" --basetemp "$others_dir/tmp" > "$others_dir/report" 2>&1 &
others_pid=$!
status=0
pytest -m "$graphs" || status=$?
others=0
wait "$others_pid" || others=$?
others_pid=""
echo "[test] every other test (pytest -m 'not ($graphs)'):"
cat "$others_dir/report"
if [[ $status -ne 0 || $others -ne 0 ]]; then
    echo "[test] FAILED: the integration tests exit $status, the others exit $others"
    exit 1
fi
