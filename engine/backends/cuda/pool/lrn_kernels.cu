// The LRN kernel across channels (lrn_cuda.cc), a small window kernel. One thread per output
// element, grid-stride loops, arithmetic as the CPU kernels do it. The kernel takes float32,
// float16 or bfloat16 elements (element_dispatch.cuh: float arithmetic either way).
#include <cmath>

#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/element_dispatch.cuh"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

template <class T>
__global__ void lrn(const T* __restrict__ x, T* __restrict__ y, int64_t n, int64_t channels, int64_t plane,
                    int64_t before, int64_t after, float scale, float beta, float bias) {
  DNNX_GRID_LOOP(i, n) {
    const int64_t s = i % plane, c = i / plane % channels, b = i / (plane * channels);
    const T* image = x + b * channels * plane + s;
    const int64_t first = c - before < 0 ? 0 : c - before;
    const int64_t last = c + after > channels - 1 ? channels - 1 : c + after;
    float sum = 0.0f;
    for (int64_t k = first; k <= last; ++k) {
      const float v = float(image[k * plane]);
      sum += v * v;
    }
    y[i] = T(float(x[i]) * powf(bias + scale * sum, -beta));
  }
}

}  // namespace

void launch_lrn(const void* x, void* y, int64_t batch, int64_t channels, int64_t plane, int64_t size, float alpha,
                float beta, float bias, DType dtype, cudaStream_t stream) {
  const int64_t n = batch * channels * plane;
  if (n == 0) return;
  with_element(dtype, [&](auto e) {
    using T = decltype(e);
    lrn<T><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), n, channels, plane,
                                                (size - 1) / 2, size / 2, alpha / static_cast<float>(size), beta,
                                                bias);
  });
  check_launch("lrn kernel");
}

}  // namespace dnnx::cuda
