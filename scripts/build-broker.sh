#!/usr/bin/env bash
# Builds tansu, an Apache-Kafka-compatible broker in Rust, into the cache for
# the AeroSim tests, demo and benchmark, unless the one there already runs.
#   scripts/build-broker.sh            build it here (in the foreground)
#   scripts/build-broker.sh background build it at idle priority, behind the
#                                      rest; scripts/wait-broker.sh waits for it
#   scripts/build-broker.sh bin        print the binary's path
# Unoptimised for the tests: it builds in 6 CPU-minutes (15 at opt-level 1),
# and the AeroSim tests take as long with it. The AeroSim benchmark, whose
# figures include the broker's CPU time, asks for it optimised
# (RFLYSIM_BROKER_OPT_LEVEL=1): that one goes into a folder of its own.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${RFLYSIM_CACHE:-$ROOT/.cache}
TANSU_VERSION=0.6.0
OPT_LEVEL=${RFLYSIM_BROKER_OPT_LEVEL:-0}
TANSU_ROOT="$CACHE/tansu"
[ "$OPT_LEVEL" = 0 ] || TANSU_ROOT="$CACHE/tansu-opt$OPT_LEVEL"
TANSU_BIN="$TANSU_ROOT/bin/tansu"
LOG="$CACHE/tansu-build.log"
PID_FILE="$CACHE/tansu-build.pid"

log() { printf '[broker] %s\n' "$*"; }

case "${1:-foreground}" in
bin)
  echo "$TANSU_BIN"
  exit 0
  ;;
foreground | background | attempts) ;;
*)
  echo "usage: $0 [background|bin]" >&2
  exit 2
  ;;
esac
"$TANSU_BIN" --version 2>/dev/null | grep -q "$TANSU_VERSION" && exit 0
mkdir -p "$CACHE"

# Not linted as scripts/test.sh's own crates are: no clippy as rustc's wrapper.
# Its own target directory: the project's build must not wait on cargo's lock.
build=(env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS CARGO_TARGET_DIR="$CACHE/tansu-target"
  CARGO_PROFILE_RELEASE_OPT_LEVEL="$OPT_LEVEL" CARGO_PROFILE_RELEASE_DEBUG=false
  cargo install --quiet --locked --features dynostore --version "=$TANSU_VERSION" tansu --root "$TANSU_ROOT")

# Its download fails now and then (seen: the index's connection reset while
# the set-up's other downloads ran): tried three times, a pause between.
if [ "${1:-}" = attempts ]; then
  for attempt in 1 2 3; do
    "${build[@]}" && exit 0
    [ $attempt = 3 ] || { log "attempt $attempt failed; again in 20 s"; sleep 20; }
  done
  exit 1
fi
if [ "${1:-}" = background ]; then
  if [ -f "$PID_FILE" ] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null; then exit 0; fi
  log "building the Kafka-protocol broker tansu $TANSU_VERSION into $TANSU_ROOT in the background (once)"
  idle=(nice -n 19)
  chrt --idle 0 true 2>/dev/null && idle=(chrt --idle 0 nice -n 19)
  # Its log's last line says how long it took and how much CPU time.
  nohup "${idle[@]}" bash "$ROOT/scripts/timed.sh" "broker build" bash "$0" attempts >"$LOG" 2>&1 &
  echo $! >"$PID_FILE"
else
  log "building the Kafka-protocol broker tansu $TANSU_VERSION into $TANSU_ROOT (once)"
  bash "$ROOT/scripts/timed.sh" "broker build" bash "$0" attempts 2>&1 | tee "$LOG"
  exit "${PIPESTATUS[0]}"
fi
