#!/usr/bin/env bash
# What spawned vehicles cost the scene node (scripts/spawned-vehicles-cost.py):
#   scripts/spawned-vehicles-cost.sh [N ...]     default 10 100 1000
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
bash scripts/setup.sh >/dev/null
set +u
# shellcheck disable=SC1091
source .cache/env.sh
set -u
cargo build --release --locked -p rflysim_bridge --bin scene_node
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
exec "$RFLYSIM_PYTHON" scripts/spawned-vehicles-cost.py "$@"
