// IsNaN (opset 9) and IsInf (10; detect_positive, detect_negative, both 1 by default): X float
// [..] -> bool [..], which elements are NaN / which are an infinity of a detected sign.
#include "ops/op.h"

namespace dnnx {

namespace {

OpDef float_class_op(std::vector<std::string> attrs, int min_opset) {
  OpDef def;
  def.min_opset = min_opset;
  def.validate = [attrs](const Node& node) { node.expect_only_attrs(attrs); };
  def.infer = [](const Node& node, const std::vector<ValueInfo>& inputs) {
    const TensorInfo& x = require_input(node, inputs, 0, "X");
    require_float(node, x, "input X");
    return std::vector<TensorInfo>{TensorInfo{x.shape, DType::Bool}};
  };
  return def;
}

}  // namespace

void register_float_class_ops(OpRegistry& r) {
  constexpr int kIsNaNOpset = 9, kIsInfOpset = 10;
  r.add("IsNaN", float_class_op({}, kIsNaNOpset));
  r.add("IsInf", float_class_op({"detect_positive", "detect_negative"}, kIsInfOpset));
}

}  // namespace dnnx
