// The grid-stride loop shared by the one-thread-per-element kernels of the *_kernels.cu files:
// the body runs once for each i in [0, n), the threads of the whole grid (launch.cuh's grid_for
// and kBlock) striding over it.
#pragma once
#include <cstdint>

#define DNNX_GRID_LOOP(i, n) \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); i += int64_t{gridDim.x} * blockDim.x)
