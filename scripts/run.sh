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
# conftest.py locks the same files). A domain given is locked shared: the runs given the same
# one meet there (a simulation and a controller in two terminals), and a run that chose its
# domain (a test session, a demo) keeps it to itself: a domain given that such a run holds
# is refused, and such a run never chooses one a given run holds.
if [[ -n "${HUMANOID_DOMAIN_ID:-}" ]]; then
    if ! [[ "$HUMANOID_DOMAIN_ID" =~ ^[0-9]+$ ]] || (( HUMANOID_DOMAIN_ID > 232 )); then
        echo "scripts/run.sh: HUMANOID_DOMAIN_ID must be a ROS domain (0..232), got '$HUMANOID_DOMAIN_ID'" >&2
        exit 2
    fi
    exec {lock}>"${TMPDIR:-/tmp}/humanoid-ros-domain-${HUMANOID_DOMAIN_ID}.lock"
    if ! flock -s -n "$lock"; then
        echo "scripts/run.sh: ROS domain $HUMANOID_DOMAIN_ID is held by a run that chose it for itself (a test" \
             "session, or a run given no HUMANOID_DOMAIN_ID): your nodes would meet its nodes. Give another" \
             "domain, or none to get a free one." >&2
        exit 1
    fi
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
