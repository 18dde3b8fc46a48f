#!/usr/bin/env bash
# Install the headless browser the view tests render the page in (Debian's chromium),
# when it is missing. Idempotent: does nothing when chromium is on the PATH.
# Needs root (as on the project's machines and in CI); otherwise says what to run.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "[setup] chromium is missing and this is not root: install it with" >&2
  echo "[setup]   sudo apt-get install -y chromium" >&2
  echo "[setup] (the humanoid view browser tests need it; everything else works without)" >&2
  exit 0
fi
echo "[setup] installing Debian's chromium (headless browser for the view tests)"
export DEBIAN_FRONTEND=noninteractive
# wait for another apt/dpkg run (another checkout's setup) instead of failing on its lock
apt-get -o DPkg::Lock::Timeout=900 update -qq
apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends chromium >/dev/null
chromium --version
