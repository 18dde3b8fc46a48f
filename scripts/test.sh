#!/usr/bin/env bash
# The whole test suite: lint, then every package's tests and the system tests.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "[test] ruff check"
ruff check .
echo "[test] pytest"
exec pytest "$@"
