#!/usr/bin/env bash
# Builds everything and runs every test: formatting, lints, Rust unit and
# integration tests, the rclpy-side tests over real DDS, and the colcon build.
# On a fresh machine it first runs scripts/setup.sh (idempotent).
#   scripts/test.sh            everything (what .ci/run does)
#   scripts/test.sh --quick    skip the slow tests (the colcon build; 1080p raw
#                              at 60 Hz across the two-host rig)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
quick=0
[ "${1:-}" = "--quick" ] && quick=1

started=$SECONDS
step() { printf '\n==== [%dm%02ds] %s\n' $(((SECONDS - started) / 60)) $(((SECONDS - started) % 60)) "$*"; }

step "set-up"
# The broker (AeroSim's tests) builds in the background, at idle priority: it
# takes the CPU time the steps below leave, and only the AeroSim tests, last,
# wait for it.
RFLYSIM_BROKER_BUILD=background bash scripts/setup.sh
# colcon's setup files and ours are not written for `set -u`.
set +u
# shellcheck disable=SC1091
source .cache/env.sh
set -u
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
# 1-100: above 101 the DDS ports fall in the ephemeral range the tests pick
# their free ports from (see tests/conftest.py).
export ROS_DOMAIN_ID=${ROS_DOMAIN_ID:-$((1 + $$ % 100))}
export CARGO_TARGET_DIR="$ROOT/target"
# The tests bind fixed ports 41000-43999, inside Linux's ephemeral range: a
# socket bound to port 0 (a DDS participant, an emulator's sender) can take
# one of them first (seen once in CI: "UDP port 42203 is already in use").
# Reserved ports are never handed out for port 0 but can still be bound by
# number. Only where this shell may (root, as in CI); it is per network namespace.
reserved=/proc/sys/net/ipv4/ip_local_reserved_ports
if [ -w "$reserved" ] && ! grep -q "41000-43999" "$reserved"; then
  current=$(cat "$reserved")
  if echo "${current:+$current,}41000-43999" >"$reserved" 2>/dev/null; then
    echo "[test] reserved UDP/TCP ports 41000-43999 for the tests (was: ${current:-none})"
  fi
fi
export CARGO_TERM_COLOR=never

step "cargo fmt --check"
cargo fmt --all --check

step "words: tracked files speak of the project, not of how it was made"
bash scripts/check-words.sh

bash scripts/refresh-r2r-bindings.sh "$CARGO_TARGET_DIR" release
bash scripts/refresh-r2r-bindings.sh "$CARGO_TARGET_DIR" fuzz

step "cargo clippy"
cargo clippy --release --locked --workspace --all-targets -- -D warnings

step "cargo build"
cargo build --release --locked --workspace --bins

step "cargo test (but the Kafka link's, which needs the broker)"
cargo test --release --locked --workspace --exclude aerosim_link

step "fuzz runs with overflow checks (profile fuzz: the wire crates, no ROS)"
cargo test --profile fuzz --locked -p rflysim_proto -p auv_proto -p gps_denied_proto -p aerosim_proto --test fuzz

step "fuzz runs with overflow checks (profile fuzz: the ROS-side pure code, time base, gimbal mapping, shared-memory chain)"
cargo test --profile fuzz --locked -p ros_common -p rflysim_ros --lib fuzzed

step "README's demo: the RflySim emulator through the bridge, its topics received"
demo_out=$(mktemp)
bash scripts/demo.sh 8 >"$demo_out" 2>&1 || true
if ! grep -qE '^ *[1-9][0-9]*\.[0-9] +/rflysim' "$demo_out"; then
  cat "$demo_out"
  echo "scripts/demo.sh: no topic received"
  exit 1
fi
grep -E '^--- ' "$demo_out" | tail -1
rm -f "$demo_out"

step "rclpy tests over DDS (but AeroSim's, which need the broker)"
not_slow=""
[ $quick = 1 ] && not_slow=" and not slow"
"$RFLYSIM_PYTHON" -m pytest tests -v -p no:cacheprovider -m "not broker$not_slow"

step "the Kafka-protocol broker"
bash scripts/wait-broker.sh

step "cargo test of the Kafka link against the broker"
cargo test --release --locked -p aerosim_link

step "rclpy tests of AeroSim against the broker"
"$RFLYSIM_PYTHON" -m pytest tests -v -p no:cacheprovider -m "broker$not_slow"
step "done"
