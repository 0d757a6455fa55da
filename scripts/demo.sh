#!/usr/bin/env bash
# Builds the bridge and runs it on the built-in RflySim emulator, with nothing
# else to install by hand, and prints the rate of every topic a ROS 2
# subscriber receives. Ctrl-C stops it; `scripts/demo.sh 10` stops after 10 s.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# The RflySim demo needs no Kafka broker: scripts/test.sh builds it.
RFLYSIM_BROKER_BUILD=none bash scripts/setup.sh
set +u
# shellcheck disable=SC1091
source .cache/env.sh
set -u
export ROS_AUTOMATIC_DISCOVERY_RANGE=${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}
bash scripts/refresh-r2r-bindings.sh "$ROOT/target" release
# RFLYSIM_CARGO_ARGS: more cargo arguments (scripts/test.sh passes the
# --config of its build, which this one then finds built).
# shellcheck disable=SC2086 # words
cargo build --release --locked --workspace --bins ${RFLYSIM_CARGO_ARGS:-}
exec "$RFLYSIM_PYTHON" scripts/demo.py "$ROOT/target/release" "$@"
