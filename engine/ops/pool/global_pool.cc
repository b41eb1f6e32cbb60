// GlobalAveragePool, GlobalMaxPool: X [N, C, spatial...] -> Y [N, C, 1, ...], one value per
// (image, channel) plane: its mean or its max.
#include <algorithm>

#include "ops/op.h"

namespace dnnx {

namespace {

std::vector<TensorInfo> infer_global_pool(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  require_float(node, x, "input X");
  if (x.shape.size() < 3) {
    node_fail<InvalidModelError>(node, "X " + shape_str(x.shape) + " must be [N, C, spatial...]");
  }
  Shape y = x.shape;
  std::fill(y.begin() + 2, y.end(), 1);
  return {TensorInfo{y, x.dtype}};
}

OpDef global_pool_op() {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({}); };
  def.infer = infer_global_pool;
  def.min_opset = 1;
  return def;
}

}  // namespace

void register_global_pool_ops(OpRegistry& r) {
  r.add("GlobalAveragePool", global_pool_op());
  r.add("GlobalMaxPool", global_pool_op());
}

}  // namespace dnnx
