// The ops over sequences and optionals (Note [sequences] in runtime/values/host_value.h): their
// meaning here is the attribute and arity checks; every one is value_shaped (a sequence's length
// and its elements' shapes are known only at run time), and the engine runs them on the host
// between plan stages (runtime/values/), with onnxruntime's semantics.
#include "ops/op.h"

namespace dnnx {

namespace {

std::vector<TensorInfo> run_by_engine(const Node& node, const std::vector<ValueInfo>&) {
  node_fail<InvalidModelError>(node, "makes or reads a sequence or optional value, which the engine holds on the host "
                                     "(Note [sequences])");
}

// An op of `min_in` to `max_in` inputs (omitted trailing ones included), one output, these attributes.
OpDef value_op(int min_opset, size_t min_in, size_t max_in, std::vector<std::string> attrs) {
  OpDef def;
  def.validate = [min_in, max_in, attrs](const Node& node) {
    node.expect_only_attrs(attrs);
    const size_t formal = node.inputs.size() - node.captured_inputs();
    if (formal < min_in || formal > max_in) {
      node_fail<InvalidModelError>(node, "takes " + std::to_string(min_in) +
                                             (max_in == min_in ? "" : max_in == SIZE_MAX ? " or more" : " to " + std::to_string(max_in)) +
                                             " inputs, got " + std::to_string(formal));
    }
    for (size_t i = 0; i < min_in; ++i) {
      if (node.inputs[i].empty()) node_fail<InvalidModelError>(node, "input " + std::to_string(i) + " is required");
    }
    if (node.outputs.size() != 1 && node.op_type != "SequenceMap") {
      node_fail<InvalidModelError>(node, "has one output, got " + std::to_string(node.outputs.size()));
    }
  };
  def.infer = run_by_engine;
  def.value_shaped = true;
  def.min_opset = min_opset;
  return def;
}

// SequenceMap: the body takes one value per formal input (plus the outer-scope values) and gives
// one per node output.
OpDef sequence_map() {
  OpDef def = value_op(17, 1, SIZE_MAX, {"body", kCapturedAttr});
  auto arity = def.validate;
  def.validate = [arity](const Node& node) {
    arity(node);
    const Graph& body = *node.attr_graph("body");
    if (body.inputs.size() != node.inputs.size() || body.outputs.size() != node.outputs.size()) {
      node_fail<InvalidModelError>(node, "body has " + std::to_string(body.inputs.size()) + " inputs and " +
                                             std::to_string(body.outputs.size()) + " outputs; the node's call for " +
                                             std::to_string(node.inputs.size()) + " and " + std::to_string(node.outputs.size()));
    }
  };
  return def;
}

}  // namespace

void register_sequence_ops(OpRegistry& r) {
  r.add("SequenceEmpty", value_op(11, 0, 0, {"dtype"}));
  r.add("SequenceConstruct", value_op(11, 1, SIZE_MAX, {}));
  r.add("SequenceAt", value_op(11, 2, 2, {}));
  r.add("SequenceInsert", value_op(11, 2, 3, {}));
  r.add("SequenceErase", value_op(11, 1, 2, {}));
  r.add("SequenceLength", value_op(11, 1, 1, {}));
  r.add("SplitToSequence", value_op(11, 1, 2, {"axis", "keepdims"}));
  r.add("ConcatFromSequence", value_op(11, 1, 1, {"axis", "new_axis"}));
  r.add("SequenceMap", sequence_map());
  r.add("Optional", value_op(15, 0, 1, {"type"}));
  r.add("OptionalHasElement", value_op(15, 0, 1, {}));  // opset 18: the input may be omitted
  r.add("OptionalGetElement", value_op(15, 1, 1, {}));
}

}  // namespace dnnx
