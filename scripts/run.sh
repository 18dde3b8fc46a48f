#!/usr/bin/env bash
# Run a command in the project environment with DDS confined to this machine and a
# private ROS domain (so that parallel runs, and other ROS users, never see it).
set -euo pipefail
# shellcheck disable=SC1091
source "$(dirname "$0")/env.sh"
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
export ROS_DOMAIN_ID="${HUMANOID_DOMAIN_ID:-$(( ($$ % 100) + 1 ))}"
exec "$@"
