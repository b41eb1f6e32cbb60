// Det (opset 11): X [..., M, M] (float32) -> [...]: the determinant of each square matrix.
#include "ops/op.h"

namespace dnnx {

namespace {

std::vector<TensorInfo> infer_det(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  require_float(node, x, "X");
  const size_t r = x.shape.size();
  if (r < 2 || x.shape[r - 1] != x.shape[r - 2]) {
    node_fail<InvalidModelError>(node, "X must be [..., M, M] (square matrices), got " + shape_str(x.shape));
  }
  return {TensorInfo{Shape(x.shape.begin(), x.shape.end() - 2), x.dtype}};
}

}  // namespace

void register_det_ops(OpRegistry& r) {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({}); };
  def.infer = infer_det;
  def.min_opset = 11;
  r.add("Det", std::move(def));
}

}  // namespace dnnx
