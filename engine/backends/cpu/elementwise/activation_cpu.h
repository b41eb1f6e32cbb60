// Elementwise activations, shared by the Relu/Sigmoid/Tanh kernels and by fused epilogues
// (Conv+Relu, LSTM gates).
#pragma once
#include <cmath>
#include <cstdint>

#include "backends/cpu/runtime/fast_math.h"

namespace dnnx {

// fast_expf's sigmoid, bit for bit (Note [exp without subnormals] in runtime/fast_math.h).
inline float sigmoidf(float x) { return 1.0f / (1.0f + fast_expf_no_subnormal(-x)); }

inline float relu_of(float v) { return v < 0.0f ? 0.0f : v; }  // NaN passes through

inline void relu_inplace(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = relu_of(x[i]);
}

}  // namespace dnnx
