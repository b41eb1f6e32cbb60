// com.microsoft's QGemm: its attributes and C's broadcast, shared by the op file and the kernel.
#pragma once
#include "ops/op.h"

namespace dnnx {

struct QGemmGeometry {
  int64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f;
  // C's int32 bias over Y [M, N]: element (i, j) reads c[i * c_row + j * c_col] (strides 0 where it broadcasts).
  int64_t c_row = 0, c_col = 0;
};

// A [M, K] (or [K, M] with transA), B [K, N] (or [N, K] with transB), C one of (), (1), (N),
// (1, N), (M, 1), (M, N); InvalidModelError naming the node and the shapes otherwise.
QGemmGeometry qgemm_geometry(const Node& node, const Shape& a, const Shape& b, const Shape* c);

}  // namespace dnnx
