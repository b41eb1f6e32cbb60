// The BatchNormalization (inference) kernel (batchnorm_cuda.cc): per-channel scale+shift with
// the statistics read on the device. One thread per output element, grid-stride loops,
// arithmetic as the CPU kernels do it. The kernel takes float32, float16 or bfloat16 elements
// (element_dispatch.cuh: float arithmetic either way).
#include <cmath>

#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/element_dispatch.cuh"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

template <class T>
__global__ void batchnorm(const T* __restrict__ x, const T* __restrict__ scale, const T* __restrict__ bias,
                          const T* __restrict__ mean, const T* __restrict__ var, T* __restrict__ y, int64_t n,
                          int64_t channels, int64_t plane, float epsilon) {
  DNNX_GRID_LOOP(i, n) {
    const int64_t c = i / plane % channels;
    const float s = float(scale[c]) / sqrtf(float(var[c]) + epsilon);
    const float t = float(bias[c]) - float(mean[c]) * s;
    y[i] = T(float(x[i]) * s + t);
  }
}

}  // namespace

void launch_batchnorm(const void* x, const void* scale, const void* bias, const void* mean, const void* var, void* y,
                      int64_t batch, int64_t channels, int64_t plane, float epsilon, DType dtype, cudaStream_t stream) {
  const int64_t n = batch * channels * plane;
  if (n == 0) return;
  with_element(dtype, [&](auto e) {
    using T = decltype(e);
    batchnorm<T><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<const T*>(scale),
                                                      static_cast<const T*>(bias), static_cast<const T*>(mean),
                                                      static_cast<const T*>(var), static_cast<T*>(y), n, channels,
                                                      plane, epsilon);
  });
  check_launch("batchnorm kernel");
}

}  // namespace dnnx::cuda
