#!/usr/bin/env bash
# Waits for the Kafka-protocol broker that scripts/build-broker.sh builds in
# the background, then checks that it runs. A background build that failed
# (its downloads reset, say) is shown and tried once more, here.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${RFLYSIM_CACHE:-$ROOT/.cache}
pid_file="$CACHE/tansu-build.pid"
bin=$(bash "$ROOT/scripts/build-broker.sh" bin)
if [ -f "$pid_file" ]; then
  pid=$(cat "$pid_file")
  if kill -0 "$pid" 2>/dev/null; then
    echo "[broker] waiting for the broker's build ($CACHE/tansu-build.log)"
    while kill -0 "$pid" 2>/dev/null; do sleep 2; done
  fi
  rm -f "$pid_file"
fi
"$bin" --version >/dev/null 2>&1 && exit 0
echo "[broker] $bin does not run; the background build's log ends:"
tail -30 "$CACHE/tansu-build.log" 2>/dev/null || true
echo "[broker] building it again, in the foreground"
# Niced: the tests running beside it judge rates and delays.
nice -n 19 bash "$ROOT/scripts/build-broker.sh" || true
if ! "$bin" --version >/dev/null 2>&1; then
  echo "[broker] the broker's build failed (log: $CACHE/tansu-build.log)"
  exit 1
fi
