// The two halves of a broadcast's gradient on the CPU, over broadcast_walk.h's runs: a side
// broadcast to the output is read expanded (broadcast_expand), and an output-shaped gradient is
// summed back to the side (broadcast_reduce, the broadcast's adjoint). Shared by the gradients of
// the broadcasting ops (binary_grad_cpu.cc, pow_prelu_cpu.cc).
#pragma once
#include <algorithm>

#include "backends/cpu/elementwise/broadcast_walk.h"

namespace dnnx {

// dst[j] = the sum of src's elements [output] that read element j of the side (dst [side]).
inline void broadcast_reduce(const BroadcastWalk& w, const float* src, float* dst, int64_t dst_size) {
  std::fill(dst, dst + dst_size, 0.0f);
  for_each_run(w, [&](int64_t out, int64_t in, int64_t count, int64_t step) {
    if (step == 0) {
      float sum = 0.0f;
      for (int64_t i = 0; i < count; ++i) sum += src[out + i];
      dst[in] += sum;
    } else {
      for (int64_t i = 0; i < count; ++i) dst[in + i] += src[out + i];
    }
  });
}

// dst [output] = src [side] broadcast to the output.
inline void broadcast_expand(const BroadcastWalk& w, const float* src, float* dst) {
  for_each_run(w, [&](int64_t out, int64_t in, int64_t count, int64_t step) {
    for (int64_t i = 0; i < count; ++i) dst[out + i] = src[in + i * step];
  });
}

}  // namespace dnnx
