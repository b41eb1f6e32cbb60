// The CPU conv kernel's epilogue (conv_cpu.cc): what it does to one output tile Y_g [Mg, OSP]
// right after the tile's GEMM, while the tile is still in cache, in one pass over it:
//   "Conv"           y = y + b
//   "Conv+Relu"      y = relu(y + b)
//   "Conv+Add+Relu"  y = relu((y + b) + z)   (z: the residual, Y_g's shape)
// The sums are taken in the order the unfused Conv, Add and Relu take them, so the fused layers
// give the unfused graph's results.
#pragma once
#include <cstdint>

namespace dnnx {

struct ConvEpilogue {
  const float* bias = nullptr;      // b_g [Mg], or none
  const float* residual = nullptr;  // z_g [Mg, OSP], or none
  bool relu = false;
};

namespace detail {

template <bool kResidual, bool kRelu>
void conv_epilogue_rows(const ConvEpilogue& e, int64_t rows, int64_t cols, float* y) {
  const float* z = e.residual;
  for (int64_t m = 0; m < rows; ++m, y += cols) {
    const float b = e.bias ? e.bias[m] : 0.0f;
    for (int64_t i = 0; i < cols; ++i) {
      float v = y[i] + b;
      if (kResidual) v += z[i];
      if (kRelu) v = v < 0.0f ? 0.0f : v;  // NaN passes through
      y[i] = v;
    }
    if (kResidual) z += cols;
  }
}

}  // namespace detail

// y [rows, cols] (one group's output of one image) through the epilogue `e`.
inline void apply_conv_epilogue(const ConvEpilogue& e, int64_t rows, int64_t cols, float* y) {
  if (e.residual) {
    e.relu ? detail::conv_epilogue_rows<true, true>(e, rows, cols, y)
           : detail::conv_epilogue_rows<true, false>(e, rows, cols, y);
  } else if (e.relu) {
    detail::conv_epilogue_rows<false, true>(e, rows, cols, y);
  } else if (e.bias) {
    detail::conv_epilogue_rows<false, false>(e, rows, cols, y);
  }
}

}  // namespace dnnx
