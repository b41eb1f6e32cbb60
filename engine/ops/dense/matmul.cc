// MatMul (opsets 1, 9, 13: they differ only in the dtypes they allow; dnnx runs float32).
#include "ops/dense/matmul.h"

#include <algorithm>

#include "ops/op.h"

namespace dnnx {

MatMulGeometry matmul_geometry(const Node& node, const Shape& a, const Shape& b) {
  if (a.empty() || b.empty()) {
    node_fail<InvalidModelError>(node, "operands must have rank >= 1, got A " + shape_str(a) +
                                           " and B " + shape_str(b));
  }
  const Shape a2 = a.size() == 1 ? Shape{1, a[0]} : a;
  const Shape b2 = b.size() == 1 ? Shape{b[0], 1} : b;
  MatMulGeometry g;
  g.m = a2[a2.size() - 2];
  g.k = a2[a2.size() - 1];
  g.n = b2[b2.size() - 1];
  const int64_t k_b = b2[b2.size() - 2];
  if (g.k != k_b) {
    node_fail<InvalidModelError>(node, "inner dimensions differ: A " + shape_str(a) + " has K=" +
                                           std::to_string(g.k) + ", B " + shape_str(b) + " has K=" +
                                           std::to_string(k_b));
  }
  const size_t rank = std::max(a2.size(), b2.size()) - 2;
  g.batch_a = Shape(rank - (a2.size() - 2), 1);
  g.batch_a.insert(g.batch_a.end(), a2.begin(), a2.end() - 2);
  g.batch_b = Shape(rank - (b2.size() - 2), 1);
  g.batch_b.insert(g.batch_b.end(), b2.begin(), b2.end() - 2);
  g.batch = Shape(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t da = g.batch_a[d], db = g.batch_b[d];
    if (da != db && da != 1 && db != 1) {
      node_fail<InvalidModelError>(node, "batch dims of A " + shape_str(a) + " and B " + shape_str(b) +
                                             " cannot be broadcast");
    }
    g.batch[d] = da == 1 ? db : da;
  }
  g.out = g.batch;
  if (a.size() > 1) g.out.push_back(g.m);
  if (b.size() > 1) g.out.push_back(g.n);
  return g;
}

namespace {

std::vector<TensorInfo> infer_matmul(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& a = require_input(node, inputs, 0, "A");
  const TensorInfo& b = require_input(node, inputs, 1, "B");
  require_float(node, a, "input A");
  require_float(node, b, "input B");
  return {TensorInfo{matmul_geometry(node, a.shape, b.shape).out, a.dtype}};
}

}  // namespace

void register_matmul_ops(OpRegistry& r) {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({}); };
  def.infer = infer_matmul;
  def.min_opset = 1;
  r.add("MatMul", std::move(def));
}

std::vector<std::pair<int64_t, int64_t>> matmul_batch_offsets(const MatMulGeometry& g) {
  const size_t rank = g.batch.size();
  std::vector<int64_t> stride_a(rank, 0), stride_b(rank, 0);
  int64_t step_a = g.m * g.k, step_b = g.k * g.n;
  for (size_t d = rank; d-- > 0;) {
    if (g.batch_a[d] != 1) stride_a[d] = step_a;
    if (g.batch_b[d] != 1) stride_b[d] = step_b;
    step_a *= g.batch_a[d];
    step_b *= g.batch_b[d];
  }
  std::vector<std::pair<int64_t, int64_t>> offsets;
  const int64_t count = numel(g.batch);
  offsets.reserve(static_cast<size_t>(count));
  std::vector<int64_t> index(rank, 0);
  int64_t off_a = 0, off_b = 0;
  for (int64_t i = 0; i < count; ++i) {
    offsets.emplace_back(off_a, off_b);
    for (size_t d = rank; d-- > 0;) {
      off_a += stride_a[d];
      off_b += stride_b[d];
      if (++index[d] < g.batch[d]) break;
      off_a -= stride_a[d] * g.batch[d];
      off_b -= stride_b[d] * g.batch[d];
      index[d] = 0;
    }
  }
  return offsets;
}

}  // namespace dnnx
