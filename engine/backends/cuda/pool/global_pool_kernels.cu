// The GlobalAveragePool / GlobalMaxPool kernel (global_pool_cuda.cc): one block per plane, a
// block-wide sum (or max) in shared memory; float32, float16 or bfloat16 elements, float
// arithmetic either way.
#include <algorithm>
#include <cmath>

#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/runtime/element_dispatch.cuh"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

// One block per plane: a block-wide sum (or max) in shared memory.
template <class T>
__global__ void global_pool(const T* __restrict__ x, T* __restrict__ y, int64_t planes, int64_t plane, bool max) {
  __shared__ float partial[kBlock];
  for (int64_t p = blockIdx.x; p < planes; p += gridDim.x) {
    const T* src = x + p * plane;
    float acc = max ? -INFINITY : 0.0f;
    for (int64_t j = threadIdx.x; j < plane; j += blockDim.x) {
      const float v = float(src[j]);
      acc = max ? ((v > acc || isnan(v)) ? v : acc) : acc + v;
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int width = kBlock / 2; width > 0; width /= 2) {
      if (threadIdx.x < width) {
        const float a = partial[threadIdx.x], b = partial[threadIdx.x + width];
        partial[threadIdx.x] = max ? ((b > a || isnan(b)) ? b : a) : a + b;
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) y[p] = T(max ? partial[0] : partial[0] / static_cast<float>(plane));
    __syncthreads();
  }
}

}  // namespace

void launch_global_pool(const void* x, void* y, int64_t planes, int64_t plane, bool max, DType dtype,
                        cudaStream_t stream) {
  if (planes == 0) return;
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(planes, kMaxBlocks));
  with_element(dtype, [&](auto e) {
    using T = decltype(e);
    global_pool<T><<<grid, kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), planes, plane, max);
  });
  check_launch("global pool kernel");
}

}  // namespace dnnx::cuda
