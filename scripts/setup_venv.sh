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
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r requirements.txt

"$VENV/bin/python" scripts/fix_ros_wheel_cmake.py "$VENV"
