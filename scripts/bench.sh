#!/usr/bin/env bash
# Runs the benchmarks and prints their tables (BENCHMARKS.md holds a copy):
#   1. rflysim_proto: reassembly + decode next to memcpy; what receiving a
#      frame's datagrams costs on its own (ros_common udp_receive);
#   2. end to end (emulator → bridge → r2r subscriber) next to an r2r
#      reference publisher: as shipped (the bridge takes
#      config/fastdds_large_data.xml by itself, the subscriber and the
#      reference keep Fast DDS's defaults), with Fast DDS's defaults
#      everywhere, and with the profile everywhere; then the bridge's CPU
#      per frame against the reference's over five rounds in turn, each
#      ratio's median;
#   3. the AUV bridge end to end (auv_sim → auv_bridge → r2r subscriber,
#      4 AUVs × 2 cameras 720p JPEG @ 30 Hz + telemetry @ 100 Hz), compressed
#      only and with the raw images subscribed, next to a pyzmq + rclpy
#      republisher (the Python reference) measured in the same run;
#   4. the GPS-denied drone end to end (gps_denied_sim → gps_denied_bridge →
#      r2r subscriber of every topic) at 25 Hz, flat out and at an equal
#      rate, next to a socket + json + base64 + rclpy republisher;
#   5. the swarm: 1, 4, 8, 16 vehicles (RFLYSIM_SWARM_SIZES), each a 640×480
#      raw camera @ 30 Hz, a 20k-point LiDAR @ 10 Hz and its IMU @ 200 Hz,
#      from one emulator into one bridge: rates, p99, CPU and RSS per vehicle.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
bash scripts/setup.sh >/dev/null
set +u
# shellcheck disable=SC1091
source .cache/env.sh
set -u
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
# 1-100: above 101 the DDS ports fall in the ephemeral range the tests pick
# their free ports from (see tests/conftest.py).
export ROS_DOMAIN_ID=${ROS_DOMAIN_ID:-$((1 + $$ % 100))}
bash scripts/refresh-r2r-bindings.sh "$ROOT/target" release
cargo build --release --locked --workspace --bins
echo "== cargo bench -p rflysim_proto"
cargo bench --locked -p rflysim_proto --bench decode 2>/dev/null
echo
echo "== cargo bench -p ros_common --bench udp_receive"
cargo bench --locked -p ros_common --bench udp_receive 2>/dev/null
echo
echo "== cargo bench -p rflysim_ros --bench end_to_end (as shipped: the bridge on its profile, the rest on defaults)"
env -u FASTRTPS_DEFAULT_PROFILES_FILE -u FASTDDS_DEFAULT_PROFILES_FILE cargo bench --locked -p rflysim_ros --bench end_to_end 2>/dev/null
echo
echo "== the same with Fast DDS's defaults everywhere (FASTRTPS_DEFAULT_PROFILES_FILE set empty)"
FASTRTPS_DEFAULT_PROFILES_FILE= cargo bench --locked -p rflysim_ros --bench end_to_end 2>/dev/null
echo
echo "== the same with FASTRTPS_DEFAULT_PROFILES_FILE=config/fastdds_large_data.xml"
FASTRTPS_DEFAULT_PROFILES_FILE="$ROOT/config/fastdds_large_data.xml" cargo bench --locked -p rflysim_ros --bench end_to_end 2>/dev/null
echo
echo "== CPU per frame against the reference: five rounds in turn, each ratio's median (profile everywhere)"
FASTRTPS_DEFAULT_PROFILES_FILE="$ROOT/config/fastdds_large_data.xml" \
  RFLYSIM_BENCH_PUBLISHER_ENV="FASTRTPS_DEFAULT_PROFILES_FILE=$ROOT/config/fastdds_large_data.xml" \
  RFLYSIM_BENCH_ROUNDS=5 RFLYSIM_BENCH_SECONDS=8 RFLYSIM_BENCH_CASES="@ 60 Hz,@ 20 Hz,UDP, flat out,shm, flat out,paced" \
  cargo bench --locked -p rflysim_ros --bench end_to_end 2>/dev/null
echo
echo "== UDP-only DDS, as for a subscriber on another host (docs/multi-host.md; SUBNET because"
echo "   with LOCALHOST rmw_fastrtps sets its own transports, shared memory included, whatever FASTDDS_BUILTIN_TRANSPORTS says)"
ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET FASTRTPS_DEFAULT_PROFILES_FILE= FASTDDS_BUILTIN_TRANSPORTS=UDPv4 \
  RFLYSIM_BENCH_PUBLISHER_ENV="FASTRTPS_DEFAULT_PROFILES_FILE= FASTDDS_BUILTIN_TRANSPORTS=UDPv4" \
  RFLYSIM_BENCH_CASES="@ 60 Hz,@ 20 Hz" cargo bench --locked -p rflysim_ros --bench end_to_end 2>/dev/null
echo
echo "== the same with the publishers on their shipped profile (shared memory + UDP), the subscriber UDP-only"
env -u FASTRTPS_DEFAULT_PROFILES_FILE ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET FASTDDS_BUILTIN_TRANSPORTS=UDPv4 \
  RFLYSIM_BENCH_PUBLISHER_ENV="FASTRTPS_DEFAULT_PROFILES_FILE=$ROOT/config/fastdds_large_data.xml FASTDDS_BUILTIN_TRANSPORTS=DEFAULT" \
  RFLYSIM_BENCH_CASES="@ 60 Hz,@ 20 Hz" cargo bench --locked -p rflysim_ros --bench end_to_end 2>/dev/null
echo
echo "== cargo bench -p auv_ros --bench auv_end_to_end (load: $(uptime))"
cargo bench --locked -p auv_ros --bench auv_end_to_end 2>/dev/null
echo
echo "== cargo bench -p gps_denied_ros --bench gps_denied_end_to_end (load: $(uptime))"
cargo bench --locked -p gps_denied_ros --bench gps_denied_end_to_end 2>/dev/null
echo
echo "== cargo bench -p rflysim_ros --bench swarm (as shipped; load: $(uptime))"
env -u FASTRTPS_DEFAULT_PROFILES_FILE -u FASTDDS_DEFAULT_PROFILES_FILE cargo bench --locked -p rflysim_ros --bench swarm 2>/dev/null
