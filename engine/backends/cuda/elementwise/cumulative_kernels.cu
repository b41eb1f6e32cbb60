// CumSum's kernels (cumulative_kernels.h). Two forms, chosen per launch:
//   inner >= 32  one thread per line, walking it in order: neighbouring threads read
//                neighbouring elements (coalesced), and there are lines enough to fill the GPU
//   else         one warp per line, 32 elements at a time: a shuffle scan of the 32, plus the
//                sum of the chunks before (the carry), so that a long line is not one thread's
// Sums are in float for the float types (the warp form adds in another order than the CPU's
// serial loop: the last bits may differ), exact for the integers.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backends/cuda/elementwise/cumulative_kernels.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/launch.cuh"
#include "backends/cuda/runtime/numeric_types.cuh"

namespace dnnx::cuda {

namespace {

// Element s of the scan order of the line starting at `base` (from the end when reverse).
__device__ inline int64_t scan_at(int64_t base, int64_t s, const CumulativeGeometry& g) {
  return base + (g.reverse ? g.n - 1 - s : s) * g.inner;
}

template <class T>
__global__ void cumsum_lines(const T* __restrict__ x, T* __restrict__ y, int64_t lines, CumulativeGeometry g) {
  using A = typename Acc<T>::type;
  for (int64_t line = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; line < lines;
       line += int64_t{gridDim.x} * blockDim.x) {
    const int64_t base = line / g.inner * g.n * g.inner + line % g.inner;
    A acc = A(0);
    for (int64_t s = 0; s < g.n; ++s) {
      const int64_t at = scan_at(base, s, g);
      const A v = static_cast<A>(x[at]);
      if (g.exclusive) y[at] = T(acc);
      acc = static_cast<A>(acc + v);
      if (!g.exclusive) y[at] = T(acc);
    }
  }
}

template <class T>
__global__ void cumsum_warps(const T* __restrict__ x, T* __restrict__ y, int64_t lines, CumulativeGeometry g) {
  using A = typename Acc<T>::type;
  constexpr int kWarp = 32;
  const int lane = threadIdx.x % kWarp;
  const int64_t warps = int64_t{gridDim.x} * (blockDim.x / kWarp);
  for (int64_t line = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) / kWarp; line < lines; line += warps) {
    const int64_t base = line / g.inner * g.n * g.inner + line % g.inner;
    A carry = A(0);
    for (int64_t start = 0; start < g.n; start += kWarp) {  // uniform per warp
      const int64_t s = start + lane;
      const int64_t at = s < g.n ? scan_at(base, s, g) : 0;
      const A v = s < g.n ? static_cast<A>(x[at]) : A(0);
      A incl = v;  // inclusive scan of the chunk
      for (int d = 1; d < kWarp; d *= 2) {
        const A up = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d) incl = static_cast<A>(incl + up);
      }
      A before = __shfl_up_sync(0xffffffffu, incl, 1);  // the exclusive scan
      if (lane == 0) before = A(0);
      if (s < g.n) y[at] = T(static_cast<A>(carry + (g.exclusive ? before : incl)));
      carry = static_cast<A>(carry + __shfl_sync(0xffffffffu, incl, kWarp - 1));
    }
  }
}

}  // namespace

void launch_cumsum(const void* x, void* y, const CumulativeGeometry& g, DType dtype, cudaStream_t stream) {
  const int64_t lines = g.outer * g.inner;
  if (lines == 0 || g.n == 0) return;
  auto run = [&](auto t) {
    using T = decltype(t);
    const T* in = static_cast<const T*>(x);
    T* out = static_cast<T*>(y);
    if (g.inner >= 32) {
      cumsum_lines<T><<<grid_for(lines), kBlock, 0, stream>>>(in, out, lines, g);
    } else {
      cumsum_warps<T><<<grid_for(lines * 32), kBlock, 0, stream>>>(in, out, lines, g);
    }
  };
  for_numeric_dtype(dtype, "CumSum kernel", run);
  check_launch("CumSum kernel");
}

}  // namespace dnnx::cuda
