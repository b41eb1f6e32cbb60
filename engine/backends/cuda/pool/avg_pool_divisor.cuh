// AveragePool's divisor along one dim, for the forward kernel (avg_pool_kernels.cu) and its
// gradient (train/grad_kernels.cu) alike: how many taps of output o's window count, inside the
// padded X [-pb, in + pe) with count_include_pad, else inside X (the CPU's rule:
// backends/cpu/pool/window_taps_cpu.h). The window's divisor is the product over its dims.
#pragma once
#include <cstdint>

namespace dnnx::cuda {

// o: the output index; in: X's size; k, s, d: kernel, stride, dilation; pb, pe: the pads.
__device__ __forceinline__ int64_t avg_pool_counted(int64_t o, int64_t in, int64_t k, int64_t s, int64_t d,
                                                    int64_t pb, int64_t pe, bool include_pad) {
  int64_t counted = 0;
  for (int64_t t = 0; t < k; ++t) {
    const int64_t idx = o * s - pb + t * d;
    if (include_pad ? idx < in + pe : (idx >= 0 && idx < in)) ++counted;
  }
  return counted;
}

}  // namespace dnnx::cuda
