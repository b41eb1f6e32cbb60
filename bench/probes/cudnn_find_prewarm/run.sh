#!/usr/bin/env bash
# Builds probe.cc against the nvidia-cudnn wheel (or the system cuDNN) and runs each mode in a new
# process, twice, in turns. Usage: bash bench/probes/cudnn_find_prewarm/run.sh [OUTDIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-/tmp}
command -v nvcc >/dev/null || export PATH=$PATH:/usr/local/cuda/bin
root=$(python3 -c "import nvidia.cudnn, os; print(list(nvidia.cudnn.__path__)[0])" 2>/dev/null || true)
inc=(); lib=()
if [ -n "$root" ] && [ -f "$root/include/cudnn.h" ]; then
  inc=(-I"$root/include"); lib=(-L"$root/lib" -Xlinker -rpath -Xlinker "$root/lib" -l:libcudnn.so.9)
else
  lib=(-lcudnn)
fi
nvcc -O2 -std=c++17 -x cu "$here/probe.cc" "${inc[@]}" "${lib[@]}" -o "$out/cudnn_find_prewarm"
for round in 1 2; do
  for mode in find same threads; do "$out/cudnn_find_prewarm" $mode 8; done
done
