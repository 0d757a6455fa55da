#!/usr/bin/env bash
# Soak test: every sensor of config/Config.json plus a 1920x1080 camera through
# the bridge for 10 minutes (or --duration S), with simulator restarts; prints
# the bridge's RSS growth, lost streams and restart recovery (scripts/soak.py).
#   BIN_DIR=/path/to/binaries scripts/soak.sh [--duration 600] [--restart-every 120]
# BIN_DIR defaults to target/release (build it with cargo build --release).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
set +u
if [ -n "${RFLYSIM_ENV:-}" ]; then
  # shellcheck disable=SC1090
  source "$RFLYSIM_ENV"
elif [ -f "$ROOT/.cache/env.sh" ]; then
  # shellcheck disable=SC1091
  source "$ROOT/.cache/env.sh"
fi
set -u
export BIN_DIR=${BIN_DIR:-$ROOT/target/release}
export ROS_DOMAIN_ID=${ROS_DOMAIN_ID:-51}
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
# 1080p images: the large-data Fast DDS profile for the bridge and the subscriber (README).
export FASTRTPS_DEFAULT_PROFILES_FILE=${FASTRTPS_DEFAULT_PROFILES_FILE:-$ROOT/config/fastdds_large_data.xml}
PY=${RFLYSIM_PYTHON:-python3}
echo "uptime at start: $(uptime)"
status=0
"$PY" "$ROOT/scripts/soak.py" "$@" || status=$?
echo "uptime at end: $(uptime)"
exit $status
