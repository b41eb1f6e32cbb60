// Relu, Sigmoid, Tanh: elementwise, output type = input type (float32 only).
// Neg, Abs: the same on float32, int32 or int64 (integer Neg and Abs of MIN wrap to MIN).
#include "ops/elementwise/elementwise.h"

namespace dnnx {

namespace {

OpDef unary_float_op() {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({}); };
  def.infer = [](const Node& node, const std::vector<ValueInfo>& inputs) {
    const TensorInfo& x = require_input(node, inputs, 0, "X");
    require_float(node, x, "input X");
    return std::vector<TensorInfo>{x};
  };
  return def;
}

OpDef unary_number_op() {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({}); };
  def.infer = [](const Node& node, const std::vector<ValueInfo>& inputs) {
    const TensorInfo& x = require_input(node, inputs, 0, "X");
    require_element_type(node, x, ElementTypes::Numbers, "input X");
    return std::vector<TensorInfo>{x};
  };
  return def;
}

}  // namespace

void register_activation_ops(OpRegistry& r) {
  r.add("Relu", unary_float_op());
  r.add("Sigmoid", unary_float_op());
  r.add("Tanh", unary_float_op());
  r.add("Neg", unary_number_op());  // y = -x
  r.add("Abs", unary_number_op());  // y = |x|
}

}  // namespace dnnx
