#!/usr/bin/env bash
# Developer build without pip: compiles _core into BUILD_DIR (default build/dev).
# Use it with:  DNNX_DEV_BUILD=build/dev PYTHONPATH=python python -m pytest tests
set -euo pipefail
dir=${1:-build/dev}
# ccache where installed: several worktrees (or a rebuild after a branch switch) share objects.
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" ${DNNX_CMAKE_ARGS:-} \
  -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)" -DPython_EXECUTABLE="$(command -v python3)" >/dev/null
cmake --build "$dir" -j "${JOBS:-2}"
