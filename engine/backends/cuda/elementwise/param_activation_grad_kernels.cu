// The gradient kernel of LeakyRelu, Elu, Selu and Clip (param_activation_grad_cuda.cc): one thread
// per element, ops/elementwise/param_activation_grad.h's formulas (the CPU's); Clip's bounds may be
// device scalars, read by every thread. float32, as all training.
#include "backends/cuda/elementwise/param_activation_grad_cuda.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

__global__ void param_activation_grad(const float* __restrict__ x, const float* __restrict__ y,
                                      const float* __restrict__ dy, float* __restrict__ dx, int64_t n,
                                      ParamActivationSlope slope, const float* lo, const float* hi) {
  if (lo) slope.lo = *lo;
  if (hi) slope.hi = *hi;
  DNNX_GRID_LOOP(i, n) { dx[i] = slope(x[i], y[i], dy[i]); }
}

}  // namespace

void launch_param_activation_grad(const float* x, const float* y, const float* dy, float* dx, int64_t n,
                                  const ParamActivationSlope& slope, const float* lo, const float* hi,
                                  cudaStream_t stream) {
  if (n == 0) return;
  param_activation_grad<<<grid_for(n), kBlock, 0, stream>>>(x, y, dy, dx, n, slope, lo, hi);
  check_launch("parametric activation gradient kernel");
}

}  // namespace dnnx::cuda
