#!/usr/bin/env bash
# Builds the bridge and runs it, with nothing else to install by hand.
# Until the built-in RflySim emulator lands, this runs the smoke publisher and
# echoes what an rclpy subscriber receives from it.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
bash scripts/setup.sh
set +u
# shellcheck disable=SC1091
source .cache/env.sh
set -u
export ROS_AUTOMATIC_DISCOVERY_RANGE=${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}
bash scripts/refresh-r2r-bindings.sh "$ROOT/target" release
cargo build --release --locked --workspace --bins
exec "$RFLYSIM_PYTHON" scripts/demo.py "$ROOT/target/release" "$@"
