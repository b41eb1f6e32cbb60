// Not: X bool [..] -> bool [..]. And, Or, Xor: A, B bool, broadcast numpy-style -> bool
// [broadcast(A, B)].
#include "ops/elementwise/elementwise.h"

namespace dnnx {

namespace {

OpDef not_op() {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({}); };
  def.infer = [](const Node& node, const std::vector<ValueInfo>& inputs) {
    const TensorInfo& x = require_input(node, inputs, 0, "X");
    require_element_type(node, x, ElementTypes::Bool, "input X");
    return std::vector<TensorInfo>{x};
  };
  def.min_opset = 1;
  return def;
}

OpDef logical_op() {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({}); };
  def.infer = [](const Node& node, const std::vector<ValueInfo>& inputs) {
    return std::vector<TensorInfo>{infer_broadcast_pair(node, inputs, ElementTypes::Bool)};
  };
  def.min_opset = 7;
  return def;
}

}  // namespace

void register_logical_ops(OpRegistry& r) {
  r.add("Not", not_op());
  r.add("And", logical_op());
  r.add("Or", logical_op());
  r.add("Xor", logical_op());
}

}  // namespace dnnx
