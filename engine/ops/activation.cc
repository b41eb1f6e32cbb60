// Relu, Sigmoid, Tanh, Neg: elementwise, output type = input type (float32 only).
#include "ops/op.h"

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

}  // namespace

void register_activation_ops(OpRegistry& r) {
  r.add("Relu", unary_float_op());
  r.add("Sigmoid", unary_float_op());
  r.add("Tanh", unary_float_op());
  r.add("Neg", unary_float_op());  // y = -x (ONNX also defines it on integers: refused here)
}

}  // namespace dnnx
