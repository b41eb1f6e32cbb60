// ArgMax / ArgMin (indexing_kernels.h: launch_arg_extreme). The CPU scans a line keeping `best`
// and moves it to i where x[i] beats x[best] (or equals it, select_last): so a NaN never wins,
// and a NaN at index 0 is never left. Here the same answer comes from an associative choice
// between two (value, index) candidates: the better value, on a tie the lower index (the higher
// with select_last), a NaN worse than any number; a line whose first element is NaN answers 0.
// Lines across the inner dim (inner > 1, a channel axis) take a thread each, so that a warp reads
// 32 neighbouring lines' elements at once; a long line of the innermost axis takes a warp
// (arg_extreme_by_warp), each lane a strided share and the warp the shuffle's choice.
#include <cuda_bf16.h>
#include <cuda_fp16.h>


#include "backends/cuda/indexing/indexing_kernels.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/launch.cuh"
#include "backends/cuda/runtime/numeric_types.cuh"

namespace dnnx::cuda {

namespace {

// Whether candidate (a, ia) is chosen over (b, ib).
template <class K>
__device__ inline bool chosen(K a, int64_t ia, K b, int64_t ib, bool max, bool last) {
  const bool na = is_nan_value(a), nb = is_nan_value(b);
  if (na || nb) return !na;  // a number over NaN; of two NaN, either (neither is ever the answer)
  if (a != b) return max ? a > b : a < b;
  return last ? ia > ib : ia < ib;
}

template <class T>
__global__ void arg_extreme_lines(const T* __restrict__ x, int64_t* __restrict__ y, int64_t lines, int64_t size,
                                  int64_t inner, bool max, bool last) {
  using K = typename Acc<T>::type;
  for (int64_t l = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; l < lines;
       l += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const T* line = x + (l / inner) * size * inner + l % inner;
    K best = K(line[0]);
    int64_t at = 0;
    if (!is_nan_value(best)) {
      for (int64_t i = 1; i < size; ++i) {
        const K v = K(line[i * inner]);
        if (chosen(v, i, best, at, max, last)) best = v, at = i;
      }
    }
    y[l] = at;
  }
}

template <class T>
__global__ void arg_extreme_by_warp(const T* __restrict__ x, int64_t* __restrict__ y, int64_t lines, int64_t size,
                                    bool max, bool last) {
  using K = typename Acc<T>::type;
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  for (int64_t l = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) / 32; l < lines; l += warps) {
    const T* line = x + l * size;
    const K first = K(line[0]);
    if (is_nan_value(first)) {  // the CPU's scan never leaves a NaN at index 0 (a warp-uniform branch)
      if (lane == 0) y[l] = 0;
      continue;
    }
    K best = first;
    int64_t at = 0;
    for (int64_t i = lane; i < size; i += 32) {
      const K v = K(line[i]);
      if (chosen(v, i, best, at, max, last)) best = v, at = i;
    }
    for (int offset = 16; offset > 0; offset /= 2) {
      const K other = __shfl_down_sync(0xffffffffu, best, offset);
      const int64_t other_at = __shfl_down_sync(0xffffffffu, at, offset);
      if (chosen(other, other_at, best, at, max, last)) best = other, at = other_at;
    }
    if (lane == 0) y[l] = at;
  }
}

}  // namespace

void launch_arg_extreme(const void* x, int64_t* y, DType dtype, int64_t outer, int64_t size, int64_t inner, bool max,
                        bool select_last, cudaStream_t stream) {
  const int64_t lines = outer * inner;
  if (lines == 0 || size == 0) return;
  const bool by_warp = arg_extreme_by_warp(size, inner);
  auto run = [&](auto t) {
    using T = decltype(t);
    if (by_warp) {
      arg_extreme_by_warp<T><<<grid_for(lines * 32), kBlock, 0, stream>>>(static_cast<const T*>(x), y, lines, size,
                                                                          max, select_last);
      return;
    }
    arg_extreme_lines<T><<<grid_for(lines), kBlock, 0, stream>>>(static_cast<const T*>(x), y, lines, size, inner, max,
                                                                 select_last);
  };
  for_numeric_dtype(dtype, "ArgMax / ArgMin kernel", run);
  check_launch("ArgMax / ArgMin kernel");
}

}  // namespace dnnx::cuda
