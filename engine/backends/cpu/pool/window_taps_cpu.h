// The taps of one output index's window along one dim, and how many of them an average's divisor
// counts: shared by AveragePool in ONNX's layout (avg_pool_cpu.cc) and channels-last
// (pool_nhwc_cpu.cc).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "ops/conv/conv_geometry.h"

namespace dnnx {

// floor(a / b) and ceil(a / b) for b > 0 and any sign of a.
inline int64_t window_floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
inline int64_t window_ceil_div(int64_t a, int64_t b) { return -window_floor_div(-a, b); }

// One output index of one dim: taps k in [lo, hi) read X index start + k * dilation; `counted`
// taps enter the divisor.
struct WindowTaps {
  int64_t start, lo, hi, counted;
};

// count_include_pad counts the taps inside the padded X, [-pads_begin, in + pads_end) (a tap
// that ceil_mode pushes past the end padding never counts); otherwise those inside X.
inline std::vector<WindowTaps> window_table(const ConvGeometry& g, int dim, bool count_include_pad) {
  std::vector<WindowTaps> table(static_cast<size_t>(g.output[dim]));
  const int64_t d = g.dilations[dim], k = g.kernel[dim];
  for (int64_t o = 0; o < g.output[dim]; ++o) {
    const int64_t start = o * g.strides[dim] - g.pads_begin[dim];
    const int64_t lo = std::clamp<int64_t>(window_ceil_div(-start, d), 0, k);
    const int64_t hi = std::clamp<int64_t>(window_floor_div(g.input[dim] - 1 - start, d) + 1, lo, k);
    const int64_t padded_end = g.input[dim] + g.pads_end[dim];
    const int64_t padded_hi = std::clamp<int64_t>(window_floor_div(padded_end - 1 - start, d) + 1, 0, k);
    table[static_cast<size_t>(o)] = {start, lo, hi, count_include_pad ? padded_hi : hi - lo};
  }
  return table;
}

}  // namespace dnnx
