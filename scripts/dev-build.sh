#!/usr/bin/env bash
# Developer build without pip: compiles _core into BUILD_DIR (default build/dev).
# Use it with:  DNNX_DEV_BUILD=build/dev PYTHONPATH=python python -m pytest tests
set -euo pipefail
dir=${1:-build/dev}
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)" -DPython_EXECUTABLE="$(command -v python3)" >/dev/null
cmake --build "$dir" -j "${JOBS:-2}"
