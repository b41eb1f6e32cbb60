// The GlobalAveragePool / GlobalMaxPool kernels (global_pool_cuda.cc): one block per plane, a
// block-wide sum (or max) in shared memory, or one warp per plane (Note [pooled by warps]);
// float32, float16 or bfloat16 elements, float arithmetic either way.
//
// Note [pooled by warps]: a block of 256 threads per plane left most of them idle on small planes
// and paid 8 barriers for each: EfficientNet-B0's squeeze-and-excitation pools (planes of 7x7 to
// 112x112, up to 73,728 planes at batch 64) and its last pool took 1.01 ms of an 11.3 ms fp32 run
// (H100, RESULTS_CUDA.md session 15). Where there are planes enough to fill the GPU with warps
// (kWarpPlanes), or the planes are small (kSmallPlane), a warp takes a plane: lanes stride over it
// and shuffles reduce their 32 partial values. The sum's order differs from the block kernel's
// (so does its rounding, within fp32 tolerance); each is fixed, so runs repeat bit for bit.
// EfficientNet-B0's whole run did not move beyond the spread with it (RESULTS_CUDA.md, session 17).
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

constexpr int kWarp = 32;
constexpr int64_t kWarpPlanes = 2048;  // 2048 warps: 64K threads, every SM busy
constexpr int64_t kSmallPlane = 256;   // 8 elements a lane or fewer

template <class T>
__global__ void global_pool_warps(const T* __restrict__ x, T* __restrict__ y, int64_t planes, int64_t plane,
                                  bool max) {
  const int lane = threadIdx.x % kWarp;
  const int64_t warps = int64_t{gridDim.x} * (blockDim.x / kWarp);
  for (int64_t p = blockIdx.x * int64_t{blockDim.x / kWarp} + threadIdx.x / kWarp; p < planes; p += warps) {
    const T* src = x + p * plane;
    float acc = max ? -INFINITY : 0.0f;
    for (int64_t j = lane; j < plane; j += kWarp) {
      const float v = float(src[j]);
      acc = max ? ((v > acc || isnan(v)) ? v : acc) : acc + v;
    }
    for (int width = kWarp / 2; width > 0; width /= 2) {
      const float b = __shfl_down_sync(0xffffffffu, acc, width);
      acc = max ? ((b > acc || isnan(b)) ? b : acc) : acc + b;
    }
    if (lane == 0) y[p] = T(max ? acc : acc / static_cast<float>(plane));
  }
}

}  // namespace

void launch_global_pool(const void* x, void* y, int64_t planes, int64_t plane, bool max, DType dtype,
                        cudaStream_t stream) {
  if (planes == 0) return;
  const bool warps = planes >= kWarpPlanes || plane <= kSmallPlane;  // Note [pooled by warps]
  const int64_t per_block = warps ? kBlock / kWarp : 1;
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>((planes + per_block - 1) / per_block, kMaxBlocks));
  with_element(dtype, [&](auto e) {
    using T = decltype(e);
    const auto kernel = warps ? global_pool_warps<T> : global_pool<T>;
    kernel<<<grid, kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), planes, plane, max);
  });
  check_launch("global pool kernel");
}

}  // namespace dnnx::cuda
