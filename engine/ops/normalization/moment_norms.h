// The normalizations by one statistic of their rows (a moment or a norm), with no learned bias.
// RMSNormalization, LpNormalization and MeanVarianceNormalization: the ONNX meaning the op
// registry and every backend's kernels read.
//   RMSNormalization   X viewed as [rows, row_len] at `axis` (row_len = prod(shape[axis:]));
//                      y = x / sqrt(mean(x^2 over the row) + epsilon) * scale, scale broadcast
//                      (numpy-style) to the normalized dims shape[axis:]: scale_index[j] is the
//                      scale element that row element j reads
//   LpNormalization    X viewed as [outer, n, inner] around `axis`; y = x / ||x||_p along n
//                      (p 1 or 2), 0 where the norm is 0
//   MeanVarianceNormalization  y = (x - mean) / sqrt(var) over `axes` (default [0, 2, 3]), var
//                      the biased mean((x - mean)^2), computed in two passes; no epsilon, so a
//                      constant cell gives NaN (0 / 0), as onnxruntime's kernel does (onnx's
//                      function form adds 1e-9 to the deviation; onnxruntime does not)
#pragma once
#include <cstdint>
#include <vector>

#include "ops/op.h"

namespace dnnx {

struct RmsNormGeometry {
  int64_t rows = 1, row_len = 1;
  float epsilon = 1e-5f;
  std::vector<int64_t> scale_index;  // [row_len]
};
RmsNormGeometry rms_norm_geometry(const Node& node, const Shape& x, const Shape& scale);

struct LpNormGeometry {
  int64_t outer = 1, n = 1, inner = 1;
  int p = 2;
};
LpNormGeometry lp_norm_geometry(const Node& node, const Shape& x);

// One flag per dim of X: whether MeanVarianceNormalization reduces over it.
std::vector<bool> mvn_reduced_axes(const Node& node, const Shape& x);

}  // namespace dnnx
