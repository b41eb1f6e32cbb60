// CumSum's and CumProd's kernels (cumulative_kernels.h), one template over the fold (Prod: x, 1
// its identity; else +, 0). Two forms, chosen per launch:
//   inner >= 32  one thread per line, walking it in order: neighbouring threads read
//                neighbouring elements (coalesced), and there are lines enough to fill the GPU
//   else         one warp per line, 32 elements at a time: a shuffle scan of the 32, plus the
//                fold of the chunks before (the carry), so that a long line is not one thread's
// Folds are in float for the float types (the warp form folds in another order than the CPU's
// serial loop: the last bits may differ), exact (wrapping) for the integers.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

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

template <bool Prod, class A>
__device__ inline A fold(A a, A b) {
  return Prod ? static_cast<A>(a * b) : static_cast<A>(a + b);
}

template <class T, bool Prod>
__global__ void cumulative_lines(const T* __restrict__ x, T* __restrict__ y, int64_t lines, CumulativeGeometry g) {
  using A = typename Acc<T>::type;
  for (int64_t line = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; line < lines;
       line += int64_t{gridDim.x} * blockDim.x) {
    const int64_t base = line / g.inner * g.n * g.inner + line % g.inner;
    A acc = A(Prod ? 1 : 0);
    for (int64_t s = 0; s < g.n; ++s) {
      const int64_t at = scan_at(base, s, g);
      const A v = static_cast<A>(x[at]);
      if (g.exclusive) y[at] = T(acc);
      acc = fold<Prod>(acc, v);
      if (!g.exclusive) y[at] = T(acc);
    }
  }
}

template <class T, bool Prod>
__global__ void cumulative_warps(const T* __restrict__ x, T* __restrict__ y, int64_t lines, CumulativeGeometry g) {
  using A = typename Acc<T>::type;
  constexpr int kWarp = 32;
  const int lane = threadIdx.x % kWarp;
  const int64_t warps = int64_t{gridDim.x} * (blockDim.x / kWarp);
  for (int64_t line = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) / kWarp; line < lines; line += warps) {
    const int64_t base = line / g.inner * g.n * g.inner + line % g.inner;
    const A identity = A(Prod ? 1 : 0);
    A carry = identity;
    for (int64_t start = 0; start < g.n; start += kWarp) {  // uniform per warp
      const int64_t s = start + lane;
      const int64_t at = s < g.n ? scan_at(base, s, g) : 0;
      const A v = s < g.n ? static_cast<A>(x[at]) : identity;
      A incl = v;  // inclusive scan of the chunk
      for (int d = 1; d < kWarp; d *= 2) {
        const A up = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d) incl = fold<Prod>(up, incl);
      }
      A before = __shfl_up_sync(0xffffffffu, incl, 1);  // the exclusive scan
      if (lane == 0) before = identity;
      if (s < g.n) y[at] = T(fold<Prod>(carry, g.exclusive ? before : incl));
      carry = fold<Prod>(carry, __shfl_sync(0xffffffffu, incl, kWarp - 1));
    }
  }
}

}  // namespace

void launch_cumulative(const void* x, void* y, const CumulativeGeometry& g, DType dtype, bool product,
                       cudaStream_t stream) {
  const int64_t lines = g.outer * g.inner;
  if (lines == 0 || g.n == 0) return;
  auto run = [&](auto t) {
    using T = decltype(t);
    const T* in = static_cast<const T*>(x);
    T* out = static_cast<T*>(y);
    auto go = [&](auto prod) {
      constexpr bool P = decltype(prod)::value;
      if (g.inner >= 32) {
        cumulative_lines<T, P><<<grid_for(lines), kBlock, 0, stream>>>(in, out, lines, g);
      } else {
        cumulative_warps<T, P><<<grid_for(lines * 32), kBlock, 0, stream>>>(in, out, lines, g);
      }
    };
    if (product) {
      go(std::true_type{});
    } else {
      go(std::false_type{});
    }
  };
  for_numeric_dtype(dtype, product ? "CumProd kernel" : "CumSum kernel", run);
  check_launch(product ? "CumProd kernel" : "CumSum kernel");
}

}  // namespace dnnx::cuda
