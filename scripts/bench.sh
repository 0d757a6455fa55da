#!/usr/bin/env bash
# Runs the benchmarks and prints their tables. With --report it also writes
# each section's output into BENCHMARKS.md, between that section's markers,
# with the commit and the machine it was taken on (scripts/bench_report.py).
#
#   scripts/bench.sh                      every section
#   scripts/bench.sh auv aerosim          some sections
#   scripts/bench.sh --report [SECTION…]  the same, and BENCHMARKS.md updated
#
# Sections (BENCHMARKS.md has one each):
#   decode      rflysim_proto reassembly + decode next to memcpy; what
#               receiving a frame's datagrams costs (ros_common udp_receive)
#   rflysim     RflySim cameras and LiDAR at rate: emulator → bridge → r2r
#               subscriber next to DDS alone and a receiving reference,
#               three rounds in turn, each CPU ratio's median
#   imu         CopterSim's IMU at 1000 Hz: emulator → bridge → r2r
#               subscriber next to DDS alone and a receiving reference,
#               nine rounds in turn, each CPU ratio's median; what the time
#               base alone costs a sample
#   4k          3840×2160 bgr8 raw over UDP at 30 Hz, from shared memory at
#               30 and 60 Hz, and a 4K JPEG at 30 Hz, next to DDS alone and a
#               receiving reference (needs net.core.rmem_max ≥ 25 MiB: raised
#               for the section when root may, and put back after)
#   capacity    the same flat out, and paced just above the flat-out rate,
#               as shipped and with Fast DDS's defaults
#   multi-host  a subscriber as on another host: UDP-only DDS
#   two-hosts   the simulator on another host: 1080p bgr8 raw at 60 Hz
#               across a veth link at MTU 1500 (IP fragments) next to the
#               same on loopback, DDS alone and a receiving reference, and
#               the bridge's receive buffer at several net.core.rmem_max
#               (needs root for the network namespace; says so otherwise)
#   auv         4 AUVs × 2 JPEG cameras @ 30 Hz + telemetry @ 100 Hz, next
#               to DDS alone, the bridge's receive path alone and a pyzmq +
#               rclpy reference, AUV_BENCH_ROUNDS (3) rounds in turn, each
#               CPU ratio's median
#   gps-denied  the GPS-denied drone at 25 Hz and flat out, next to DDS
#               alone and a socket + json + rclpy reference
#   aerosim     AeroSim over Kafka, next to DDS alone, the bridge's Kafka
#               reading alone and a confluent-kafka + rclpy reference
#   swarm       1, 4, 8, 16 RflySim vehicles from one emulator into one bridge
#   scene       100 and 1 000 vehicles placed at 30 Hz from one bulk message,
#               next to DDS alone and an rclpy + struct reference
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
ALL=(decode rflysim imu 4k capacity multi-host two-hosts auv gps-denied aerosim swarm scene)
report=0
sections=()
for a in "$@"; do
  case "$a" in
    --report) report=1 ;;
    -h | --help) sed -n '2,42p' "$0"; exit 0 ;;
    *) [[ " ${ALL[*]} " == *" $a "* ]] || { echo "unknown section $a (sections: ${ALL[*]})"; exit 2; }
       sections+=("$a") ;;
  esac
done
((${#sections[@]})) || sections=("${ALL[@]}")

# The AeroSim section's figures include the broker's CPU time: with the broker
# optimised, as the tests' is not (docs/development.md).
broker_opt_level=0
[[ " ${sections[*]} " == *" aerosim "* ]] && broker_opt_level=1
RFLYSIM_BROKER_OPT_LEVEL=$broker_opt_level bash scripts/setup.sh >/dev/null
set +u
# shellcheck disable=SC1091
source .cache/env.sh
set -u
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
# 1-100: above 101 the DDS ports fall in the ephemeral range the tests pick
# their free ports from (see tests/conftest.py).
export ROS_DOMAIN_ID=${ROS_DOMAIN_ID:-$((1 + $$ % 100))}
export CARGO_TARGET_DIR="$ROOT/target"
bash scripts/refresh-r2r-bindings.sh "$ROOT/target" release
cargo build --release --locked --workspace --bins
PROFILE="$ROOT/config/fastdds_large_data.xml"
bench() { cargo bench --locked "$@" 2>/dev/null; }

section_decode() {
  echo "\$ cargo bench -p rflysim_proto --bench decode"
  bench -p rflysim_proto --bench decode
  echo
  echo "\$ cargo bench -p ros_common --bench udp_receive"
  bench -p ros_common --bench udp_receive
}

section_rflysim() {
  echo "\$ RFLYSIM_BENCH_ROUNDS=3 RFLYSIM_BENCH_CASES=\"@ 60 Hz,@ 20 Hz,!4K\" cargo bench -p rflysim_ros --bench end_to_end"
  echo "  (every publisher on config/fastdds_large_data.xml, the bridge's shipped profile)"
  FASTRTPS_DEFAULT_PROFILES_FILE="$PROFILE" RFLYSIM_BENCH_PUBLISHER_ENV="FASTRTPS_DEFAULT_PROFILES_FILE=$PROFILE" \
    RFLYSIM_BENCH_ROUNDS=3 RFLYSIM_BENCH_SECONDS=8 RFLYSIM_BENCH_CASES="@ 60 Hz,@ 20 Hz,!4K" \
    bench -p rflysim_ros --bench end_to_end
}

section_imu() {
  # A sample costs microseconds: nine 10-s rounds, so that the median is
  # not one round's noise.
  echo "\$ RFLYSIM_BENCH_ROUNDS=9 RFLYSIM_BENCH_SECONDS=10 RFLYSIM_BENCH_CASES=\"@ 1000 Hz\" cargo bench -p rflysim_ros --bench end_to_end"
  echo "  (every publisher on config/fastdds_large_data.xml, the bridge's shipped profile)"
  FASTRTPS_DEFAULT_PROFILES_FILE="$PROFILE" RFLYSIM_BENCH_PUBLISHER_ENV="FASTRTPS_DEFAULT_PROFILES_FILE=$PROFILE" \
    RFLYSIM_BENCH_ROUNDS=9 RFLYSIM_BENCH_SECONDS=10 RFLYSIM_BENCH_CASES="@ 1000 Hz" \
    bench -p rflysim_ros --bench end_to_end
  echo
  echo "\$ cargo bench -p ros_common --bench time_base"
  bench -p ros_common --bench time_base
}

section_4k() {
  # A 4K bgr8 frame is 23.7 MiB sent in one burst: it is lost whole unless the
  # socket's receive buffer holds it, and the kernel caps that at rmem_max.
  local was
  was=$(sysctl -n net.core.rmem_max)
  if [ "$was" -lt 33554432 ] && sysctl -qw net.core.rmem_max=33554432 2>/dev/null; then
    trap 'sysctl -qw net.core.rmem_max='"$was"'; trap - RETURN' RETURN
  fi
  echo "\$ RFLYSIM_BENCH_ROUNDS=3 RFLYSIM_BENCH_CASES=\"4K\" cargo bench -p rflysim_ros --bench end_to_end"
  echo "  (net.core.rmem_max=$(sysctl -n net.core.rmem_max), $was before the section; every publisher on config/fastdds_large_data.xml)"
  FASTRTPS_DEFAULT_PROFILES_FILE="$PROFILE" RFLYSIM_BENCH_PUBLISHER_ENV="FASTRTPS_DEFAULT_PROFILES_FILE=$PROFILE" \
    RFLYSIM_BENCH_ROUNDS=3 RFLYSIM_BENCH_SECONDS=8 RFLYSIM_BENCH_CASES="4K" \
    bench -p rflysim_ros --bench end_to_end
}

section_capacity() {
  echo "\$ RFLYSIM_BENCH_CASES=\"flat out,paced\" cargo bench -p rflysim_ros --bench end_to_end   # as shipped"
  (unset FASTRTPS_DEFAULT_PROFILES_FILE FASTDDS_DEFAULT_PROFILES_FILE
    RFLYSIM_BENCH_CASES="flat out,paced" bench -p rflysim_ros --bench end_to_end)
  echo
  echo "\$ FASTRTPS_DEFAULT_PROFILES_FILE= RFLYSIM_BENCH_CASES=\"flat out\" cargo bench …   # Fast DDS's defaults everywhere"
  FASTRTPS_DEFAULT_PROFILES_FILE= RFLYSIM_BENCH_CASES="flat out" bench -p rflysim_ros --bench end_to_end
}

section_multi-host() {
  # With LOCALHOST rmw_fastrtps sets its own transports, shared memory included,
  # whatever FASTDDS_BUILTIN_TRANSPORTS says: SUBNET is part of the set-up.
  echo "\$ ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET FASTDDS_BUILTIN_TRANSPORTS=UDPv4 FASTRTPS_DEFAULT_PROFILES_FILE= RFLYSIM_BENCH_CASES=\"@ 60 Hz,@ 20 Hz,!4K\" cargo bench …   # UDP-only everywhere"
  ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET FASTRTPS_DEFAULT_PROFILES_FILE= FASTDDS_BUILTIN_TRANSPORTS=UDPv4 \
    RFLYSIM_BENCH_PUBLISHER_ENV="FASTRTPS_DEFAULT_PROFILES_FILE= FASTDDS_BUILTIN_TRANSPORTS=UDPv4" \
    RFLYSIM_BENCH_CASES="@ 60 Hz,@ 20 Hz,!4K" bench -p rflysim_ros --bench end_to_end
  echo
  echo "\$ … the publishers on their shipped profile, the subscriber UDP-only (a remote rviz2)"
  (unset FASTRTPS_DEFAULT_PROFILES_FILE
    ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET FASTDDS_BUILTIN_TRANSPORTS=UDPv4 \
      RFLYSIM_BENCH_PUBLISHER_ENV="FASTRTPS_DEFAULT_PROFILES_FILE=$PROFILE FASTDDS_BUILTIN_TRANSPORTS=DEFAULT" \
      RFLYSIM_BENCH_CASES="@ 60 Hz,@ 20 Hz,!4K" bench -p rflysim_ros --bench end_to_end)
}

section_two-hosts() {
  # As docs/multi-host.md advises; the receive-buffer rows set their own
  # net.core.rmem_max, each put back after its case.
  local was
  was=$(sysctl -n net.core.rmem_max)
  if [ "$was" -lt 33554432 ] && sysctl -qw net.core.rmem_max=33554432 2>/dev/null; then
    trap 'sysctl -qw net.core.rmem_max='"$was"'; trap - RETURN' RETURN
  fi
  local cases="1080p bgr8 raw UDP @ 60 Hz,reference: 1080p Image @ 60 Hz,receiving reference: 1080p Image from raw UDP @ 60 Hz,across a link at 60 Hz"
  echo "\$ RFLYSIM_BENCH_ROUNDS=3 RFLYSIM_BENCH_CASES=\"$cases\" cargo bench -p rflysim_ros --bench end_to_end"
  echo "  (net.core.rmem_max=$(sysctl -n net.core.rmem_max), $was before the section; every publisher on config/fastdds_large_data.xml)"
  FASTRTPS_DEFAULT_PROFILES_FILE="$PROFILE" RFLYSIM_BENCH_PUBLISHER_ENV="FASTRTPS_DEFAULT_PROFILES_FILE=$PROFILE" \
    RFLYSIM_BENCH_ROUNDS=3 RFLYSIM_BENCH_SECONDS=8 RFLYSIM_BENCH_CASES="$cases" \
    bench -p rflysim_ros --bench end_to_end
  echo
  echo "\$ RFLYSIM_BENCH_CASES=\"rmem_max\" cargo bench -p rflysim_ros --bench end_to_end   # net.core.rmem_max set for each case"
  FASTRTPS_DEFAULT_PROFILES_FILE="$PROFILE" RFLYSIM_BENCH_PUBLISHER_ENV="FASTRTPS_DEFAULT_PROFILES_FILE=$PROFILE" \
    RFLYSIM_BENCH_SECONDS=8 RFLYSIM_BENCH_CASES="rmem_max" bench -p rflysim_ros --bench end_to_end
}

section_auv() {
  echo "\$ cargo bench -p auv_ros --bench auv_end_to_end"
  bench -p auv_ros --bench auv_end_to_end
}

section_gps-denied() {
  echo "\$ cargo bench -p gps_denied_ros --bench gps_denied_end_to_end"
  bench -p gps_denied_ros --bench gps_denied_end_to_end
}

section_aerosim() {
  echo "\$ AEROSIM_BENCH_ROUNDS=3 cargo bench -p aerosim_ros --bench aerosim_end_to_end"
  AEROSIM_BENCH_ROUNDS=3 bench -p aerosim_ros --bench aerosim_end_to_end
}

section_swarm() {
  echo "\$ cargo bench -p rflysim_ros --bench swarm   # as shipped"
  (unset FASTRTPS_DEFAULT_PROFILES_FILE FASTDDS_DEFAULT_PROFILES_FILE; bench -p rflysim_ros --bench swarm)
}

section_scene() {
  # 15-s windows: a tick's CPU is a fraction of a millisecond, and its
  # ratio to DDS alone's moves by a tenth between 8-s rounds.
  echo "\$ RFLYSIM_BENCH_ROUNDS=3 RFLYSIM_BENCH_SECONDS=15 cargo bench -p rflysim_ros --bench scene_poses"
  RFLYSIM_BENCH_ROUNDS=3 RFLYSIM_BENCH_SECONDS=15 bench -p rflysim_ros --bench scene_poses
}

out="$ROOT/target/bench-report"
mkdir -p "$out"
for s in "${sections[@]}"; do
  echo "==== $s (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  "section_$s" | tee "$out/$s.txt"
  echo
done
if [ $report = 1 ]; then
  "$RFLYSIM_PYTHON" scripts/bench_report.py BENCHMARKS.md "$out" "${sections[@]}"
fi
