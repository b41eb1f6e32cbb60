// Expand: data (any dtype) broadcast numpy-style against a constant shape: Y's shape is
// broadcast(data's shape, shape), so a 1 in `shape` keeps data's dim.
#include "ops/const_inputs.h"
#include "ops/op.h"

namespace dnnx {

namespace {

std::vector<TensorInfo> infer_expand(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "input");
  const Shape shape = constant_ints(node, inputs, 1, "shape");
  for (int64_t d : shape) {
    if (d < 0) node_fail<InvalidModelError>(node, "shape " + shape_str(shape) + " has a negative dim");
  }
  return {TensorInfo{broadcast_shapes(node, x.shape, shape), x.dtype}};
}

}  // namespace

void register_expand_ops(OpRegistry& r) {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({}); };
  def.infer = infer_expand;
  def.value_inputs = {1};  // the shape
  r.add("Expand", std::move(def));
}

}  // namespace dnnx
