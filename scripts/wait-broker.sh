#!/usr/bin/env bash
# Waits for the Kafka-protocol broker that scripts/setup.sh builds in the
# background (RFLYSIM_BROKER_BUILD=background), then checks that the one
# .cache/env.sh names (AEROSIM_BROKER_BIN) runs.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${RFLYSIM_CACHE:-$ROOT/.cache}
pid_file="$CACHE/tansu-build.pid"
if [ -f "$pid_file" ]; then
  pid=$(cat "$pid_file")
  if kill -0 "$pid" 2>/dev/null; then
    echo "[broker] waiting for the broker's build ($CACHE/tansu-build.log)"
    while kill -0 "$pid" 2>/dev/null; do sleep 2; done
  fi
  rm -f "$pid_file"
fi
if ! "${AEROSIM_BROKER_BIN:?source .cache/env.sh first}" --version >/dev/null 2>&1; then
  tail -30 "$CACHE/tansu-build.log" 2>/dev/null || true
  echo "[broker] the broker's build failed"
  exit 1
fi
