#!/usr/bin/env bash
# Builds everything and runs every test: formatting, lints, Rust unit and
# integration tests, the rclpy-side tests over real DDS, and the colcon build.
# On a fresh machine it first runs scripts/setup.sh (idempotent).
#   scripts/test.sh            everything (what .ci/run does)
#   scripts/test.sh --quick    skip the slow colcon-build test
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
quick=0
[ "${1:-}" = "--quick" ] && quick=1

step() { printf '\n==== %s\n' "$*"; }

step "set-up"
bash scripts/setup.sh
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
export CARGO_TERM_COLOR=never

step "cargo fmt --check"
cargo fmt --all --check

bash scripts/refresh-r2r-bindings.sh "$CARGO_TARGET_DIR" release
bash scripts/refresh-r2r-bindings.sh "$CARGO_TARGET_DIR" fuzz

step "cargo clippy"
cargo clippy --release --locked --workspace --all-targets -- -D warnings

step "cargo build"
cargo build --release --locked --workspace --bins

step "cargo test"
cargo test --release --locked --workspace

step "fuzz runs with overflow checks (profile fuzz: the wire crates, no ROS)"
cargo test --profile fuzz --locked -p rflysim_proto -p auv_proto -p gps_denied_proto --test fuzz

step "fuzz runs with overflow checks (profile fuzz: the ROS-side pure code, time base and gimbal mapping)"
cargo test --profile fuzz --locked -p ros_common -p rflysim_ros --lib fuzzed

step "rclpy tests over DDS"
markers=()
[ $quick = 1 ] && markers=(-m "not slow")
"$RFLYSIM_PYTHON" -m pytest tests -v -p no:cacheprovider "${markers[@]}"
