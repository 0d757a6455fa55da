#!/usr/bin/env bash
# Builds everything and runs every test: formatting, lints, Rust unit,
# integration and fuzz tests, the rclpy-side tests over real DDS, and the
# colcon build. On a fresh machine it first runs scripts/setup.sh (idempotent).
#   scripts/test.sh            everything (what .ci/run does)
#   scripts/test.sh --quick    skip the slow tests (the colcon build; 1080p raw
#                              at 60 Hz across the two-host rig)
# Each step's duration goes to .cache/test-steps.log (the run before: .prev);
# the output of what runs beside the steps to .cache/test-logs/.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
quick=0
[ "${1:-}" = "--quick" ] && quick=1

# The steps log: one line per finished step or job, with the wall clock, the
# minutes into the run, the seconds it took and how busy the CPUs were
# meanwhile ("niced": the background builds' share).
mkdir -p .cache/test-logs
STEPS_LOG="$ROOT/.cache/test-steps.log"
LOGS="$ROOT/.cache/test-logs"
[ -f "$STEPS_LOG" ] && mv "$STEPS_LOG" "$STEPS_LOG.prev"
started=$SECONDS
started_at=$(date +%s)
printf '# scripts/test.sh%s, started %s, %s CPUs\n# clock      at    took  CPUs busy    what\n' \
  "${*:+ $*}" "$(date -u +%FT%TZ)" "$(nproc)" >"$STEPS_LOG"
cpu_sample() { # into the named variable: "busy niced total" jiffies of all CPUs so far
  local _cpu user nice system idle iowait irq softirq steal _rest
  read -r _cpu user nice system idle iowait irq softirq steal _rest </proc/stat
  printf -v "$1" '%s %s %s' $((user + nice + system + irq + softirq + steal)) "$nice" \
    $((user + nice + system + idle + iowait + irq + softirq + steal))
}
log_line() { # seconds-taken cpu-sample-at-start what
  local at=$((SECONDS - started)) now busy=-- b0 n0 t0 b1 n1 t1
  cpu_sample now
  read -r b0 n0 t0 <<<"$2"
  read -r b1 n1 t1 <<<"$now"
  [ -n "$2" ] && [ $((t1 - t0)) -gt 0 ] && busy=$(printf '%3d%% (%d%%)' $((100 * (b1 - b0) / (t1 - t0))) $((100 * (n1 - n0) / (t1 - t0))))
  printf '%s %3dm%02ds %6ds  %-10s  %s\n' "$(date -u +%T)" $((at / 60)) $((at % 60)) "$1" "$busy" "$3" >>"$STEPS_LOG"
}
current_step=""
step_started=$SECONDS
step_cpu=""
end_step() {
  [ -n "$current_step" ] && log_line $((SECONDS - step_started)) "$step_cpu" "$current_step${1:+ ($1)}"
  current_step=""
}
step() {
  end_step
  current_step=$*
  step_started=$SECONDS
  cpu_sample step_cpu
  printf '\n==== [%dm%02ds] %s\n' $(((SECONDS - started) / 60)) $(((SECONDS - started) % 60)) "$*"
}
run_cpu=""
cpu_sample run_cpu
on_exit() {
  local rc=$?
  [ "$BASHPID" = $$ ] || return 0 # a job's subshell ending
  if [ $rc != 0 ]; then
    end_step "FAILED, exit $rc"
    kill_jobs
  fi
  log_line $((SECONDS - started)) "$run_cpu" "scripts/test.sh$([ $rc = 0 ] || echo ", FAILED, exit $rc")"
  printf '\n==== step times (%s)\n' "$STEPS_LOG"
  cat "$STEPS_LOG"
}
trap on_exit EXIT

# Jobs beside the steps: `job NAME cmd...` starts one with its output in
# $LOGS/NAME.log; `finish NAME` waits for it, prints its output and fails
# when it failed. Its wall and CPU time go to the steps log.
declare -A job_pids=()
job() {
  local name=$1
  shift
  # A process group of its own (job control on while it forks): a failed run
  # ends a job with all that it started.
  set -m
  (
    t0=$SECONDS
    cpu_sample cpu0
    rc=0
    "$@" >"$LOGS/$name.log" 2>&1 </dev/null || rc=$?
    times >"$LOGS/$name.times" # the CPU time of what it ran (a builtin: not in a subshell)
    cpu=$(awk 'NR == 2 { gsub(/[ms]/, " "); printf "%d", $1 * 60 + $2 + $3 * 60 + $4 }' "$LOGS/$name.times")
    rm -f "$LOGS/$name.times"
    log_line $((SECONDS - t0)) "$cpu0" "  job $name: ${cpu} s of CPU$([ $rc = 0 ] || echo ", FAILED, exit $rc")"
    exit $rc
  ) &
  job_pids[$name]=$!
  set +m
}
finish() {
  local name=$1 rc=0
  wait "${job_pids[$name]}" || rc=$?
  unset "job_pids[$name]"
  printf '\n---- %s (%s)\n' "$name" "$LOGS/$name.log"
  cat "$LOGS/$name.log"
  return $rc
}
kill_jobs() {
  local pid ns
  for pid in "${job_pids[@]}"; do
    kill -- -"$pid" 2>/dev/null || true
  done
  for ns in $(ip netns list 2>/dev/null | grep -o "^rflysim_test_[0-9]*_$$"); do
    ip netns del "$ns" || true
  done
}

# Every cargo command below builds the one release build: clippy lints the
# workspace's crates while they compile (clippy-driver as rustc's wrapper for
# them, what `cargo clippy` itself does, with -D warnings), and
# scripts/cargo-ci.toml switches on overflow checks and debug assertions in
# them (not in the dependencies). Dependencies' features are the same for
# every selection of crates (crates/dev/workspace_hack): nothing is compiled twice.
export CARGO_TARGET_DIR="$ROOT/target"
export CARGO_TERM_COLOR=never
export RFLYSIM_CARGO_ARGS="--config $ROOT/scripts/cargo-ci.toml"
lint_while_compiling() {
  export RUSTC_WORKSPACE_WRAPPER=clippy-driver
  export CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__
}
# shellcheck disable=SC2086 # RFLYSIM_CARGO_ARGS is words
cargo_ci() { cargo "$@" $RFLYSIM_CARGO_ARGS; }
# The workspace's crates that need no ROS 2 (nothing of theirs depends on r2r,
# whose bindings need the set-up's messages), as -p arguments.
crates_without_ros() {
  cargo metadata --format-version 1 --no-deps --locked | python3 -c '
import json, sys
packages = {p["name"]: p for p in json.load(sys.stdin)["packages"]}
seen = {}
def needs_ros(name):
    if name not in seen:
        seen[name] = True
        seen[name] = any(d["name"] == "r2r" or (d["name"] in packages and needs_ros(d["name"]))
                         for d in packages[name]["dependencies"])
    return seen[name]
print(" ".join("-p " + n for n in sorted(packages) if not needs_ros(n)))'
}
# Downloads the crates, then builds (and lints) the crates without ROS while
# the set-up installs ROS 2 and builds the messages.
early_build() {
  lint_while_compiling
  cargo fetch --locked --target "$(rustc -vV | sed -n 's/^host: //p')"
  # shellcheck disable=SC2046 # -p arguments
  cargo_ci build --release --locked --all-targets $(crates_without_ros)
}

# The rclpy tests mostly wait (for DDS discovery, a rate, a timeout): they run
# in shards at once, split by their measured durations. Each shard but the
# first is a host of its own: a network namespace (loopback, and a veth to
# this one for an address and a default route; nothing is forwarded from
# there) with the test ports reserved and a /dev/shm of its own (the
# emulators' and Fast DDS's shared memory), and a ROS domain of its own, so
# that no fixed port, segment or DDS participant of one shard meets another's.
# The first runs here: the tests that make hosts of their own (netns_rig) and
# every test file no other shard names. Without root, the shards run one after
# the other, here.
SHARD_B=(tests/test_readme.py tests/test_sensors.py tests/test_time_base.py tests/test_scene.py
  tests/test_parameters.py)
SHARD_C=(tests/test_signals.py tests/test_gps_denied_bridge.py tests/test_control_plane.py
  tests/test_auv_sim.py tests/test_gps_denied_sim.py)
SHARD_COLCON=(tests/test_colcon_build.py)
# 1080p raw at 60 Hz across the two-host rig needs the machine to itself: on a
# loaded one the bridge falls behind and the kernel drops datagrams, a loss
# the test (rightly) does not forgive. It runs last, alone.
# The pace tests judge each stamp against its arrival within milliseconds: on a
# loaded machine the subscriber's own arrival lags by more. AeroSim's need the
# broker; so does the README's AeroSim block, whose 30 Hz camera (a 720p JPEG
# the emulator encodes each frame) a machine busy with the shards cannot keep.
# The README's blocks measure their simulators' rates with `ros2 topic hz`: an
# emulator that renders its camera (the AUV's, 2 × 640×480 a message at
# 10 Hz) falls behind beside the shards.
README_BLOCKS=tests/test_readme.py::test_readme_blocks_show_what_they_promise
ALONE=(tests/test_two_hosts_loss.py tests/test_pace.py "$README_BLOCKS")
ALONE_BROKER=(tests/test_pace_aerosim.py "$README_BLOCKS")
shard_ignores() {
  local f
  for f in "${SHARD_B[@]}" "${SHARD_C[@]}" "${SHARD_COLCON[@]}" "${ALONE[@]}"; do printf -- '--ignore=%s\n' "$f"; done
}
mapfile -t SHARD_A < <(echo tests; shard_ignores)
own_hosts=0
if [ "$(id -u)" = 0 ] && command -v ip >/dev/null && ip netns list >/dev/null 2>&1; then
  own_hosts=1
fi
# as_own_host INDEX cmd...: cmd on a host of its own (above).
as_own_host() {
  local index=$1 ns="rflysim_test_$1_$$" link="rft$1h$$" subnet="" x rc=0
  shift
  for x in $(seq 0 249); do
    x=$(((x + $$ + 40 * index) % 250))
    ip -4 -o addr show | grep -q " 10\.78\.$x\." || { subnet=10.78.$x; break; }
  done
  ip netns add "$ns"
  ip link add "$link" type veth peer name eth0 netns "$ns"
  ip addr add "$subnet.1/30" dev "$link"
  ip link set "$link" up
  ip -n "$ns" addr add "$subnet.2/30" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  ip -n "$ns" route add default via "$subnet.1"
  ip netns exec "$ns" sh -c 'mount -t tmpfs -o mode=1777 tmpfs /dev/shm &&
    echo 41000-43999 >/proc/sys/net/ipv4/ip_local_reserved_ports && exec "$@"' sh "$@" || rc=$?
  ip netns del "$ns"
  return $rc
}
# pytest_shard NAME INDEX pytest-args...: one shard, ROS domain ROS_DOMAIN_ID + INDEX.
pytest_shard() {
  local name=$1 index=$2
  shift 2
  local run=(env ROS_DOMAIN_ID=$((1 + (ROS_DOMAIN_ID - 1 + index) % 100)) "$RFLYSIM_PYTHON" -m pytest -v -p no:cacheprovider
    --durations=20 --basetemp="${TMPDIR:-/tmp}/rflysim-test-$$-$name" "$@")
  if [ $own_hosts = 1 ] && [ "$index" != 0 ]; then
    as_own_host "$index" "${run[@]}"
  else
    "${run[@]}"
  fi
}
# The colcon build is what a user's is: no lints, no checks added. It starts
# when the broker's build is done (the AeroSim tests wait for that one), at
# the lowest priority of the ordinary class: it takes what the tests leave.
colcon_shard() {
  unset RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS RFLYSIM_CARGO_ARGS
  wait_for_broker_build
  renice -n 19 -p $BASHPID >/dev/null
  pytest_shard colcon 3 "${SHARD_COLCON[@]}"
}
# The AeroSim tests, on a host of their own: the Kafka link's cargo tests
# (once the build directory is free), then the rclpy ones.
# A job's function runs where `set -e` does not hold: each failure is kept.
aerosim_shard() {
  bash scripts/wait-broker.sh || return 1
  local rust=(cargo test --release --locked -p aerosim_link) rc=0
  # shellcheck disable=SC2206 # words
  rust+=($RFLYSIM_CARGO_ARGS)
  if [ $own_hosts = 1 ]; then as_own_host 4 "${rust[@]}" || rc=1; else "${rust[@]}" || rc=1; fi
  pytest_shard broker 5 -m "broker$not_slow" --ignore="${ALONE_BROKER[0]}" --deselect="${ALONE_BROKER[1]}" tests || rc=1
  return $rc
}
wait_for_broker_build() {
  local pid
  pid=$(cat .cache/tansu-build.pid 2>/dev/null) || return 0
  while kill -0 "$pid" 2>/dev/null; do sleep 2; done
}
# The broker's build (when this run made it) into the steps log, at the time it ended.
log_broker_build() {
  local timed wall cpu ended
  if [ "$(date -r .cache/tansu-build.log +%s 2>/dev/null || echo 0)" -ge "$started_at" ] &&
    timed=$(grep -h '^\[timed\] broker build' .cache/tansu-build.log); then
    read -r wall cpu <<<"$(sed -E 's/.*exit [0-9]+, ([0-9]+) s, ([0-9]+) s of CPU/\1 \2/' <<<"$timed")"
    ended=$(($(date -r .cache/tansu-build.log +%s) - started_at))
    printf '%s %3dm%02ds %6ds  %-10s    job broker build (scripts/setup.sh): %s s of CPU\n' \
      "$(date -u -r .cache/tansu-build.log +%T)" $((ended / 60)) $((ended % 60)) "$wall" "" "$cpu" >>"$STEPS_LOG"
  fi
}
not_slow=""
[ $quick = 1 ] && not_slow=" and not slow"

step "set-up"
job early-build early_build
# The broker (AeroSim's tests) builds in the background, at idle priority: it
# takes the CPU time the steps below leave, and only the AeroSim tests wait for it.
RFLYSIM_BROKER_BUILD=background bash scripts/setup.sh
# colcon's setup files and ours are not written for `set -u`.
set +u
# shellcheck disable=SC1091
source .cache/env.sh
set -u
lint_while_compiling
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
# 1-100: above 101 the DDS ports fall in the ephemeral range the tests pick
# their free ports from (see tests/conftest.py). The rclpy tests' shards take
# this one and the next ones (100 is followed by 1).
export ROS_DOMAIN_ID=${ROS_DOMAIN_ID:-$((1 + $$ % 100))}
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

[ $quick = 1 ] || [ $own_hosts = 0 ] || job rclpy-colcon colcon_shard

step "cargo fmt --check"
cargo fmt --all --check

step "words: tracked files speak of the project, not of how it was made"
bash scripts/check-words.sh

step "rooms: no source file over 600 lines before its tests, no import cycle"
python3 scripts/room-check.py

bash scripts/refresh-r2r-bindings.sh "$CARGO_TARGET_DIR" release
# Not built here, but by hand (docs/development.md): its bindings stay current too.
bash scripts/refresh-r2r-bindings.sh "$CARGO_TARGET_DIR" fuzz

step "cargo build of every target (clippy -D warnings; overflow checks in the workspace's crates)"
# What it did not finish (a lint, say) the build below does again, and fails on.
finish early-build || echo "[test] the build of the crates without ROS failed: the whole build follows"
cargo_ci build --release --locked --workspace --all-targets
[ $own_hosts = 0 ] || job aerosim aerosim_shard

step "cargo test: unit, integration and fuzz tests (but the Kafka link's, which need the broker)"
cargo_ci test --release --locked --workspace --exclude aerosim_link 2>&1 | tee "$LOGS/cargo-test.log"

step "README's demo: the RflySim emulator through the bridge, its topics received"
demo_out="$LOGS/demo.log"
bash scripts/demo.sh 8 >"$demo_out" 2>&1 || true
if ! grep -qE '^ *[1-9][0-9]*\.[0-9] +/rflysim' "$demo_out"; then
  cat "$demo_out"
  echo "scripts/demo.sh: no topic received"
  exit 1
fi
grep -E '^--- ' "$demo_out" | tail -1

step "rclpy tests over DDS, in shards at once (AeroSim's and the colcon build's beside them)"
rc=0
if [ $own_hosts = 1 ]; then
  job rclpy-A pytest_shard A 0 -m "not broker$not_slow" "${SHARD_A[@]}"
  job rclpy-B pytest_shard B 1 -m "not broker$not_slow" --deselect="$README_BLOCKS" "${SHARD_B[@]}"
  job rclpy-C pytest_shard C 2 -m "not broker$not_slow" "${SHARD_C[@]}"
  for shard in A B C; do finish "rclpy-$shard" || rc=1; done
else
  pytest_shard A 0 -m "not broker$not_slow" "${SHARD_A[@]}" || rc=1
  pytest_shard B 0 -m "not broker$not_slow" --deselect="$README_BLOCKS" "${SHARD_B[@]}" || rc=1
  pytest_shard C 0 -m "not broker$not_slow" "${SHARD_C[@]}" || rc=1
fi
[ $rc = 0 ]

step "AeroSim's tests against the Kafka-protocol broker (the Kafka link's cargo tests, the rclpy tests)"
if [ $own_hosts = 1 ]; then finish aerosim; else aerosim_shard; fi
log_broker_build
# The build step builds all that the cargo commands after it need: what one of
# them compiled shows a dependency whose features differ between selections
# of crates, which workspace_hack does not know yet.
if compiled=$(grep -h '^ *Compiling ' "$LOGS/cargo-test.log" "$LOGS/demo.log" "$LOGS/aerosim.log" 2>/dev/null); then
  echo "[test] compiled after the build step (crates/dev/workspace_hack out of date? docs/development.md):"
  echo "$compiled"
  log_line 0 "" "compiled after the build step: $(awk '{print $2}' <<<"$compiled" | sort -u | tr '\n' ' ')"
fi

if [ $quick = 0 ]; then
  step "colcon build of the package in a workspace, its executables run"
  if [ $own_hosts = 1 ]; then finish rclpy-colcon; else (colcon_shard); fi
fi

step "alone on the machine: loss between the simulator PC and the bridge; stamps at any pace; the README's rates"
pytest_shard alone 0 -m "not broker$not_slow" "${ALONE[@]}"
pytest_shard alone-broker 0 -m "broker$not_slow" "${ALONE_BROKER[@]}"
end_step
