# Source this file to work in the project environment:
#   source scripts/env.sh
# It activates the virtualenv, sources the colcon workspace (if built) and keeps DDS
# on this machine (discovery range and the interfaces DDS binds) unless you chose otherwise.
_humanoid_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export VIRTUAL_ENV="$_humanoid_root/.venv"
export PATH="$VIRTUAL_ENV/bin:$PATH"
export PYTHONNOUSERSITE=1
case ":${AMENT_PREFIX_PATH:-}:" in
  *":$VIRTUAL_ENV:"*) ;;
  *) export AMENT_PREFIX_PATH="$VIRTUAL_ENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}" ;;
esac
if [ -f "$_humanoid_root/install/setup.bash" ]; then
  # colcon's scripts read unset variables: relax `set -u` while sourcing them
  case $- in *u*) _humanoid_nounset=1; set +u ;; *) _humanoid_nounset= ;; esac
  # shellcheck disable=SC1091
  source "$_humanoid_root/install/setup.bash"
  [ -n "$_humanoid_nounset" ] && set -u
  unset _humanoid_nounset
fi
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
# DDS sockets on the loopback interface and shared memory only (the discovery range alone
# limits peers, not the interfaces sockets are bound to); README.md: "DDS on a network".
export FASTDDS_DEFAULT_PROFILES_FILE="${FASTDDS_DEFAULT_PROFILES_FILE:-$_humanoid_root/humanoid_bringup/config/dds/fastdds_loopback.xml}"
# Python caches each module's bytecode (in __pycache__ beside it) the first time it imports it.
# Some environments set PYTHONDONTWRITEBYTECODE, and then every interpreter compiles every module
# it imports again: a simulated graph's four processes spent 9 CPU-seconds starting instead of 4
# (docs/graph_cost.md, "Bytecode"), and the suite starts a few hundred of them.
unset PYTHONDONTWRITEBYTECODE
# One BLAS thread per process, as every node runs (humanoid_core.processes.run_tethered):
# the tests, benchmarks and in-process experiments too (docs/ros_and_dds.md, "One BLAS thread").
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
unset _humanoid_root
