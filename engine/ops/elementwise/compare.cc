// Equal, Less, Greater, LessOrEqual, GreaterOrEqual: A [..], B [..] of one type, broadcast
// numpy-style -> bool [broadcast(A, B)]. Equal takes every number type, bool and string; the
// orderings take float32, int32 and int64 (NaN compares false, as in IEEE and onnxruntime).
#include "ops/elementwise/elementwise.h"

namespace dnnx {

namespace {

OpDef compare_op(ElementTypes types, int min_opset) {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({}); };
  def.infer = [types](const Node& node, const std::vector<ValueInfo>& inputs) {
    TensorInfo out = infer_broadcast_pair(node, inputs, types);
    out.dtype = DType::Bool;
    return std::vector<TensorInfo>{out};
  };
  def.min_opset = min_opset;
  return def;
}

}  // namespace

void register_compare_ops(OpRegistry& r) {
  r.add("Equal", compare_op(ElementTypes::AnyButStorage, 7));
  r.add("Less", compare_op(ElementTypes::Numbers, 7));
  r.add("Greater", compare_op(ElementTypes::Numbers, 7));
  r.add("LessOrEqual", compare_op(ElementTypes::Numbers, 12));
  r.add("GreaterOrEqual", compare_op(ElementTypes::Numbers, 12));
}

}  // namespace dnnx
