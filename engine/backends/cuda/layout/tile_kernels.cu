// Tile's gradient (glue_kernels.h: launch_tile_grad): a thread per element of dX walks its tiles.
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

__global__ void tile_grad(const float* __restrict__ dy, float* __restrict__ dx, int64_t n, TileDims t) {
  DNNX_GRID_LOOP(i, n) {
    // i's position in X and its offset in Y's first tile.
    int64_t rest = i, base = 0, tiles = 1;
    for (int d = t.rank - 1; d >= 0; --d) {
      base += rest % t.size[d] * t.y_stride[d];
      rest /= t.size[d];
      tiles *= t.reps[d];
    }
    float acc = 0.0f;
    for (int64_t k = 0; k < tiles; ++k) {  // the tile index, row-major over reps
      int64_t at = base, r = k;
      for (int d = t.rank - 1; d >= 0; --d) {
        at += r % t.reps[d] * t.size[d] * t.y_stride[d];
        r /= t.reps[d];
      }
      acc += dy[at];
    }
    dx[i] = acc;
  }
}

}  // namespace

void launch_tile_grad(const float* dy, float* dx, int64_t n, const TileDims& t, cudaStream_t stream) {
  if (n == 0) return;
  tile_grad<<<grid_for(n), kBlock, 0, stream>>>(dy, dx, n, t);
  check_launch("Tile gradient kernel");
}

}  // namespace dnnx::cuda
