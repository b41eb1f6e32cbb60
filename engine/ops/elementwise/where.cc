// Where (opset 9+): condition bool [..], X [..], Y [..] (X and Y of one type: float32, int32,
// int64 or bool), all three broadcast numpy-style -> X's type [broadcast(condition, X, Y)]:
// out = condition ? X : Y.
#include "ops/elementwise/elementwise.h"

namespace dnnx {

namespace {

std::vector<TensorInfo> infer_where(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& c = require_input(node, inputs, 0, "condition");
  const TensorInfo& x = require_input(node, inputs, 1, "X");
  const TensorInfo& y = require_input(node, inputs, 2, "Y");
  if (c.dtype != DType::Bool) {
    node_fail<InvalidModelError>(node, std::string("condition must be bool, got ") + dtype_name(c.dtype));
  }
  if (x.dtype != y.dtype) {
    node_fail<InvalidModelError>(node, std::string("X is ") + dtype_name(x.dtype) + " but Y is " + dtype_name(y.dtype));
  }
  require_element_type(node, x, ElementTypes::AnyButStorage, "X and Y");
  return {TensorInfo{broadcast_shapes(node, broadcast_shapes(node, c.shape, x.shape), y.shape), x.dtype}};
}

}  // namespace

void register_where_ops(OpRegistry& r) {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({}); };
  def.infer = infer_where;
  def.min_opset = 9;
  r.add("Where", std::move(def));
}

}  // namespace dnnx
