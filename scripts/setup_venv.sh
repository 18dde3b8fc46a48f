#!/usr/bin/env bash
# Create (or update) the project virtualenv with the pinned dependencies, then make
# the ROS 2 wheels usable by CMake. Idempotent: safe to run again at any time.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}
# uv (from PyPI) installs the pinned set: it fetches the ~140 wheels that come from PyPI in
# parallel where pip fetches them one after the other (a clean install on a loaded 2-core
# machine: 5.5 min and 22 CPU-s instead of pip's 26 min and 52 CPU-s). pip remains the fallback.
UV_VERSION=0.13.8

if [ ! -x "$VENV/bin/python" ]; then
  echo "[setup] creating virtualenv $VENV"
  "$PYTHON" -m venv "$VENV"
fi

# The indexes, links and constraints pip is configured with on this machine (pip.conf, PIP_*),
# as uv arguments: uv reads no pip configuration.
uv_args() {
  "$VENV/bin/python" -m pip config list 2>/dev/null | "$VENV/bin/python" -c '
import shlex, sys
flags = {"index-url": "--index-url", "extra-index-url": "--extra-index-url",
         "find-links": "--find-links", "constraint": "--constraint"}
rank = {"global": 0, "user": 1, "site": 2, ":env:": 3}   # pip: a later level overrides
chosen = {}
for line in sys.stdin:
    key, _, value = line.strip().partition("=")
    level, _, name = key.rpartition(".")
    if name in flags and rank.get(level, 0) >= chosen.get(name, (-1, None))[0]:
        chosen[name] = (rank.get(level, 0), shlex.split(value)[0].split())
for name, (_, values) in chosen.items():
    for value in values:
        print(flags[name])
        print(value)
'
}

echo "[setup] installing pinned dependencies (requirements.txt)"
# --no-compile: Python compiles a module the first time it is imported; compiling every file
# of every wheel up front (Ray alone has thousands) took about half of the set-up's CPU.
pip_install() {
  "$VENV/bin/python" -m pip install --quiet --no-compile --disable-pip-version-check "$@"
}
# unsafe-best-match: take each pinned release from whichever index has it, as pip does (uv's
# default takes a package from the first index that lists its name, whatever the release);
# --link-mode=copy: fix_ros_wheel_cmake.py rewrites installed files, not uv's cache behind them.
if pip_install "uv==$UV_VERSION" && mapfile -t UV_ARGS < <(uv_args) \
  && "$VENV/bin/uv" pip install --quiet --python "$VENV/bin/python" --link-mode=copy \
       --index-strategy unsafe-best-match "${UV_ARGS[@]}" -r requirements.txt; then
  :
else
  # uv not available or failed: pip alone does the same (slower)
  echo "[setup] uv could not install requirements.txt: installing it with pip"
  pip_install -r requirements.txt
fi

"$VENV/bin/python" scripts/fix_ros_wheel_cmake.py "$VENV"
