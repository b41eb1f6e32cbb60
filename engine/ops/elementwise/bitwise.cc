// BitShift (opset 11; direction "LEFT" or "RIGHT"), BitwiseAnd, BitwiseOr, BitwiseXor (18):
// X, Y of one integer type, broadcast numpy-style -> Z of that type. BitwiseNot (18): X -> ~X.
// The formulas are ops/elementwise/bitwise.h's.
#include "ops/elementwise/bitwise.h"

#include "ops/elementwise/elementwise.h"

namespace dnnx {

namespace {

constexpr int kBitShiftOpset = 11, kBitwiseOpset = 18;

OpDef bitwise_binary_op(std::vector<std::string> attrs, int min_opset) {
  OpDef def;
  def.min_opset = min_opset;
  def.validate = [attrs](const Node& node) {
    node.expect_only_attrs(attrs);
    if (node.op_type == "BitShift") {
      const std::string direction = node.attr_string("direction", "");
      if (direction != "LEFT" && direction != "RIGHT") {
        node_fail<InvalidModelError>(node, "direction '" + direction + "' must be 'LEFT' or 'RIGHT'");
      }
    }
  };
  def.infer = [](const Node& node, const std::vector<ValueInfo>& inputs) {
    return std::vector<TensorInfo>{infer_broadcast_pair(node, inputs, ElementTypes::Integers)};
  };
  return def;
}

OpDef bitwise_not_op() {
  OpDef def;
  def.min_opset = kBitwiseOpset;
  def.validate = [](const Node& node) { node.expect_only_attrs({}); };
  def.infer = [](const Node& node, const std::vector<ValueInfo>& inputs) {
    const TensorInfo& x = require_input(node, inputs, 0, "X");
    require_element_type(node, x, ElementTypes::Integers, "input X");
    return std::vector<TensorInfo>{x};
  };
  return def;
}

}  // namespace

void register_bitwise_ops(OpRegistry& r) {
  r.add("BitShift", bitwise_binary_op({"direction"}, kBitShiftOpset));
  for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) r.add(op, bitwise_binary_op({}, kBitwiseOpset));
  r.add("BitwiseNot", bitwise_not_op());
}

}  // namespace dnnx
