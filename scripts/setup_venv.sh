#!/usr/bin/env bash
# Create (or update) the project virtualenv with the pinned dependencies, then make
# the ROS 2 wheels usable by CMake. Idempotent: safe to run again at any time.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}

if [ ! -x "$VENV/bin/python" ]; then
  echo "[setup] creating virtualenv $VENV"
  "$PYTHON" -m venv "$VENV"
fi

echo "[setup] installing pinned dependencies (requirements.txt)"
# --no-compile: Python compiles a module the first time it is imported; compiling every file
# of every wheel up front (Ray alone has thousands) took about half of the set-up's CPU.
"$VENV/bin/python" -m pip install --quiet --no-compile --disable-pip-version-check -r requirements.txt

"$VENV/bin/python" scripts/fix_ros_wheel_cmake.py "$VENV"
