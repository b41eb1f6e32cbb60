// The ReduceMean kernel (reduce_cuda.cc): each output element sums its reduced elements, both
// walked by BroadcastDims. One thread per output element, grid-stride loops, arithmetic as the
// CPU kernels do it. The kernel takes float32 or float16 elements (element_dispatch.cuh: float
// arithmetic either way).
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/element_dispatch.cuh"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

__device__ __forceinline__ int64_t walk(int64_t i, const BroadcastDims& dims) {
  int64_t offset = 0;
  for (int d = dims.rank - 1; d >= 0; --d) {
    offset += i % dims.size[d] * dims.stride_a[d];
    i /= dims.size[d];
  }
  return offset;
}

template <class T>
__global__ void reduce_mean(const T* __restrict__ x, T* __restrict__ y, int64_t n, BroadcastDims out,
                            BroadcastDims red, int64_t count) {
  DNNX_GRID_LOOP(i, n) {
    const T* base = x + walk(i, out);
    float sum = 0.0f;
    for (int64_t j = 0; j < count; ++j) sum += float(base[walk(j, red)]);
    y[i] = T(sum / static_cast<float>(count));
  }
}

}  // namespace

void launch_reduce_mean(const void* x, void* y, int64_t n, const BroadcastDims& out, const BroadcastDims& red,
                        int64_t count, bool half, cudaStream_t stream) {
  if (n == 0) return;
  with_element(half, [&](auto e) {
    using T = decltype(e);
    reduce_mean<T><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), n, out, red,
                                                        count);
  });
  check_launch("reduce mean kernel");
}

}  // namespace dnnx::cuda
