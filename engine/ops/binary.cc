// Add, Sub, Mul, Div: elementwise float32, int32 or int64 (both inputs the same type) with numpy multidirectional broadcasting (opset 7+).
// Opsets before 7 used unidirectional broadcasting controlled by `broadcast`/`axis`; those
// attributes are refused with a message that says so rather than silently reinterpreted.
#include "ops/op.h"

namespace dnnx {

namespace {

void validate_binary(const Node& node) {
  for (const char* legacy : {"broadcast", "axis"}) {
    if (node.has_attr(legacy)) {
      node_fail<UnsupportedModelError>(
          node, std::string("attribute '") + legacy +
                    "' is legacy (opset < 7) broadcasting; only numpy broadcasting (opset >= 7) "
                    "is supported");
    }
  }
  node.expect_only_attrs({});
}

// A [..] op B [..] -> C [broadcast(A, B)]; both inputs of one type.
std::vector<TensorInfo> infer_binary(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& a = require_input(node, inputs, 0, "A");
  const TensorInfo& b = require_input(node, inputs, 1, "B");
  if (a.dtype != b.dtype) {
    node_fail<InvalidModelError>(node, std::string("A is ") + dtype_name(a.dtype) + " but B is " + dtype_name(b.dtype));
  }
  return {TensorInfo{broadcast_shapes(node, a.shape, b.shape), a.dtype}};
}

OpDef binary_op() {
  OpDef def;
  def.validate = validate_binary;
  def.infer = infer_binary;
  def.min_opset = 7;
  return def;
}

}  // namespace

void register_binary_ops(OpRegistry& r) {
  r.add("Add", binary_op());
  r.add("Sub", binary_op());
  r.add("Mul", binary_op());
  r.add("Div", binary_op());
}

}  // namespace dnnx
