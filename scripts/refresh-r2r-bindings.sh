#!/usr/bin/env bash
# r2r regenerates its message bindings when its environment changes, not when
# a .msg file does; stale bindings abort at run time. Cleans r2r's generated
# crates in a cargo target directory whenever this package's interfaces (or
# the Simulation Interfaces built with them) changed since last time.
# Usage: refresh-r2r-bindings.sh <target-dir> <profile>
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
target=${1:?target dir}
profile=${2:?profile}
digest=$(cat "$ROOT"/msg/*.msg "$ROOT"/srv/*.srv "$ROOT"/interfaces/*/msg/*.msg "$ROOT"/interfaces/*/srv/*.srv |
  sha256sum | cut -c1-16)
stamp="$target/.rflysim-msg-digest-$profile"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" != "$digest" ]; then
  echo "[refresh-r2r-bindings] interfaces changed: regenerating r2r's bindings in $target"
  (cd "$ROOT" && CARGO_TARGET_DIR="$target" cargo clean --profile "$profile" -p r2r_msg_gen -p r2r -p r2r_rcl >/dev/null 2>&1 || true)
fi
mkdir -p "$target"
echo "$digest" >"$stamp"
