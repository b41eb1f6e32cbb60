// LayerNormalization, InstanceNormalization and GroupNormalization share one form, written once
// here for every backend's kernels (backends/cpu/normalization/normalization_cpu.cc, backends/cuda/elementwise/
// normalization_cuda.cc): X is viewed as [rows, row_len]; each row is normalized by its own mean
// and variance, xhat = (x - mean) / sqrt(var + epsilon) (the biased variance, as ONNX
// specifies), then y = xhat * scale[p] + bias[p], where the parameter index p of element (r, j) is
//   p = (r % row_groups) * chunks + j / chunk_len.
//   LayerNormalization   rows = prod(shape[:axis]), row_len = prod(shape[axis:]);
//                        row_groups 1, chunks row_len, chunk_len 1        (p = j)
//   InstanceNormalization X [N, C, S...]: rows N*C, row_len S; row_groups C, chunks 1,
//                        chunk_len S                                        (p = c)
//   GroupNormalization   X [N, C, S...], G groups: rows N*G, row_len (C/G)*S; row_groups G;
//                        opset 21 (per channel): chunks C/G, chunk_len S    (p = channel)
//                        opset 18 (per group):   chunks 1, chunk_len row_len (p = group)
#pragma once
#include <cstdint>

#include "ops/op.h"

namespace dnnx {

struct NormGeometry {
  int64_t rows = 0, row_len = 0;
  int64_t row_groups = 1, chunks = 1, chunk_len = 1;
  int64_t params = 0;  // scale's and bias's elements: row_groups * chunks
  float epsilon = 1e-5f;
};

// The geometry of a LayerNormalization, InstanceNormalization or GroupNormalization node over
// X's shape (the OpDefs have checked the shapes).
NormGeometry norm_geometry(const Node& node, const Shape& x);

}  // namespace dnnx
