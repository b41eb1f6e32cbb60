// Sum, Max, Min: one or more inputs of one dtype (float32, int32 or int64), broadcast together
// numpy-style (opset 8+; opsets 6-7 required equal shapes, a special case). Mean: the same over
// float inputs, the sum divided by the number of inputs.
#include "ops/op.h"

namespace dnnx {

namespace {

std::vector<TensorInfo> infer_variadic(const Node& node, const std::vector<ValueInfo>& inputs) {
  if (inputs.empty()) node_fail<InvalidModelError>(node, "needs at least one input");
  TensorInfo out = require_input(node, inputs, 0, "data_0");
  for (size_t i = 1; i < inputs.size(); ++i) {
    const TensorInfo& x = require_input(node, inputs, i, "data_i");
    if (x.dtype != out.dtype) {
      node_fail<InvalidModelError>(node, "input " + std::to_string(i) + " is " + dtype_name(x.dtype) +
                                             ", input 0 is " + dtype_name(out.dtype));
    }
    out.shape = broadcast_shapes(node, out.shape, x.shape);
  }
  if (node.op_type == "Mean") require_float(node, out, "the inputs");
  return {out};
}

OpDef variadic_op() {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({}); };
  def.infer = infer_variadic;
  return def;
}

}  // namespace

void register_variadic_ops(OpRegistry& r) {
  r.add("Sum", variadic_op());
  r.add("Max", variadic_op());
  r.add("Min", variadic_op());
  r.add("Mean", variadic_op());
}

}  // namespace dnnx
