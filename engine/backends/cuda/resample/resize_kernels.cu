// Resize's nearest and linear kernels (resize_kernels.h): one thread per output element, grid-
// stride loops. Per dim the element reads one tap (nearest, or a dim left as it is) or two
// (linear: floor(src) and the next, weights 1 - frac and frac, clamped into X); the element is
// the sum over the 2^(linear dims) combinations, in the CPU walk's order (last dim fastest).
#include "backends/cuda/resample/resize_kernels.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

// The taps of output element o: per dim up to two (index into X already times its stride).
struct ElementTaps {
  int64_t offset[kMaxResizeDims][2];
  float weight[kMaxResizeDims][2];
  int count[kMaxResizeDims];
  bool outside;
};

__device__ __forceinline__ void element_taps(const ResizeLaunch& p, int64_t o, ElementTaps& t) {
  t.outside = false;
  for (int d = p.rank - 1; d >= 0; --d) {
    const ResizeDim& dim = p.dims[d];
    const int64_t at = o % dim.out;
    o /= dim.out;
    const int64_t stride = p.in_strides[d];
    t.count[d] = 1;
    t.weight[d][0] = 1.0f;
    if (dim.identity) {
      t.offset[d][0] = at * stride;
      continue;
    }
    const double src = resize_source(p.coord, dim, at);
    t.outside = t.outside || resize_outside(p.coord, dim, src);
    if (p.mode == ResizeMode::Nearest) {
      t.offset[d][0] = resize_nearest(p.nearest, dim, src) * stride;
      continue;
    }
    const int64_t lo = resize_floor(src);
    const double frac = src - static_cast<double>(lo);
    t.count[d] = 2;
    t.offset[d][0] = resize_clamp(lo, dim.in) * stride;
    t.offset[d][1] = resize_clamp(lo + 1, dim.in) * stride;
    t.weight[d][0] = static_cast<float>(1 - frac);
    t.weight[d][1] = static_cast<float>(frac);
  }
}

// Calls visit(offset, weight) for each combination, the last dim's tap fastest.
template <class Visit>
__device__ __forceinline__ void each_combination(const ResizeLaunch& p, const ElementTaps& t, Visit visit) {
  int k[kMaxResizeDims] = {};
  while (true) {
    int64_t offset = 0;
    float weight = 1.0f;
    for (int d = 0; d < p.rank; ++d) {
      offset += t.offset[d][k[d]];
      weight *= t.weight[d][k[d]];
    }
    visit(offset, weight);
    int d = p.rank - 1;
    while (d >= 0 && ++k[d] == t.count[d]) k[d--] = 0;
    if (d < 0) return;
  }
}

__global__ void resize_forward(ResizeLaunch p, const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  DNNX_GRID_LOOP(o, n) {
    ElementTaps t;
    element_taps(p, o, t);
    if (t.outside) {
      y[o] = p.extrapolation;
      continue;
    }
    float sum = 0.0f;
    each_combination(p, t, [&](int64_t offset, float w) { sum += w * x[offset]; });
    y[o] = sum;
  }
}

}  // namespace

void launch_resize(const ResizeLaunch& p, const float* x, float* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  resize_forward<<<grid_for(n), kBlock, 0, stream>>>(p, x, y, n);
  check_launch("resize kernel");
}

}  // namespace dnnx::cuda
