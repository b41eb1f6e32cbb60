// Gemm: Y[M,N] = alpha * op(A) * op(B) + beta * C, C optional and unidirectionally broadcast
// to [M,N]. A is [M,K] ([K,M] with transA), B is [K,N] ([N,K] with transB).
#include "ops/op.h"

namespace dnnx {

namespace {

std::vector<TensorInfo> infer_gemm(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& a = require_input(node, inputs, 0, "A");
  const TensorInfo& b = require_input(node, inputs, 1, "B");
  require_float(node, a, "input A");
  require_float(node, b, "input B");
  if (a.shape.size() != 2 || b.shape.size() != 2) {
    node_fail<InvalidModelError>(node, "A and B must be 2-D, got A " + shape_str(a.shape) + " and B " +
                                           shape_str(b.shape));
  }
  const bool trans_a = node.attr_int("transA", 0) != 0;
  const bool trans_b = node.attr_int("transB", 0) != 0;
  const int64_t m = trans_a ? a.shape[1] : a.shape[0];
  const int64_t k = trans_a ? a.shape[0] : a.shape[1];
  const int64_t kb = trans_b ? b.shape[1] : b.shape[0];
  const int64_t n = trans_b ? b.shape[0] : b.shape[1];
  if (k != kb) {
    node_fail<InvalidModelError>(node, "inner dimensions differ: A " + shape_str(a.shape) +
                                           (trans_a ? " (transposed)" : "") + " and B " +
                                           shape_str(b.shape) + (trans_b ? " (transposed)" : ""));
  }
  if (inputs.size() > 2 && inputs[2].present) {
    const TensorInfo& c = inputs[2].info;
    require_float(node, c, "input C");
    const Shape target{m, n};
    if (c.shape.size() > 2 || broadcast_shapes(node, c.shape, target) != target) {
      node_fail<InvalidModelError>(node, "C " + shape_str(c.shape) + " cannot be broadcast to " +
                                             shape_str(target));
    }
  }
  return {TensorInfo{{m, n}, a.dtype}};
}

}  // namespace

void register_gemm_ops(OpRegistry& r) {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({"alpha", "beta", "transA", "transB"}); };
  def.infer = infer_gemm;
  r.add("Gemm", def);
}

}  // namespace dnnx
