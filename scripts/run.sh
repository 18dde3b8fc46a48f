#!/usr/bin/env bash
# Run a command in the project environment with DDS confined to this machine (loopback
# and shared memory only) and a private ROS domain (so that parallel runs, and other ROS users, never see it).
set -euo pipefail
# shellcheck disable=SC1091
source "$(dirname "$0")/env.sh"
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
export FASTDDS_DEFAULT_PROFILES_FILE="$(cd "$(dirname "$0")/.." && pwd)/humanoid_bringup/config/dds/fastdds_loopback.xml"
# The domain: HUMANOID_DOMAIN_ID if set, else one (1..100) no other run on this machine holds:
# each run keeps an exclusive lock on a file named after its domain for as long as the
# command lives (the lock's descriptor is inherited by the command; the test session's
# conftest.py locks the same files).
if [[ -n "${HUMANOID_DOMAIN_ID:-}" ]]; then
    export ROS_DOMAIN_ID="$HUMANOID_DOMAIN_ID"
else
    chosen=""
    for offset in $(seq 0 99); do
        domain=$(( ( ($$ + offset) % 100 ) + 1 ))
        exec {lock}>"${TMPDIR:-/tmp}/humanoid-ros-domain-${domain}.lock"
        if flock -n "$lock"; then
            export ROS_DOMAIN_ID="$domain"
            chosen=yes
            break
        fi
        exec {lock}>&-
    done
    if [[ -z "$chosen" ]]; then
        echo "scripts/run.sh: every ROS domain 1..100 is locked by another run; set HUMANOID_DOMAIN_ID" >&2
        exit 1
    fi
fi
exec "$@"
