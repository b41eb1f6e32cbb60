// Tile's gradient kernel (tile_kernels.cu), for layout/tile_cuda.cc.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

namespace dnnx::cuda {

constexpr int kMaxTileDims = 8;

// X [size...] tiled `reps` times along each dim into Y [reps * size...]; strides of Y, packed.
struct TileDims {
  int rank = 0;
  int64_t size[kMaxTileDims] = {};
  int64_t reps[kMaxTileDims] = {};
  int64_t y_stride[kMaxTileDims] = {};
};

// dx[i] = the sum of dy over i's tiles, one thread per element of dX, the tiles in row-major
// order: the CPU's order (backends/cpu/indexing/indexing_cpu.cc adds them as Y's index grows), so
// the same bits, and no atomics. float32.
void launch_tile_grad(const float* dy, float* dx, int64_t n, const TileDims& t, cudaStream_t stream);

}  // namespace dnnx::cuda
