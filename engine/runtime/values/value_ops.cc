#include "runtime/values/value_ops.h"

#include <set>

namespace dnnx {

bool is_value_op(const Node& node) {
  static const std::set<std::string> kOps = {
      "SequenceEmpty", "SequenceConstruct", "SequenceAt", "SequenceInsert", "SequenceErase", "SequenceLength",
      "SplitToSequence", "ConcatFromSequence", "SequenceMap", "Optional", "OptionalHasElement", "OptionalGetElement"};
  return node.domain.empty() && kOps.count(node.op_type) != 0;
}

std::vector<HostValue> run_value_op(Engine& owner, const Node& node, const std::vector<HostValue>& inputs) {
  if (node.op_type == "SplitToSequence") return run_split_to_sequence(node, inputs);
  if (node.op_type == "ConcatFromSequence") return run_concat_from_sequence(node, inputs);
  if (node.op_type == "SequenceMap") return run_sequence_map(owner, node, inputs);
  if (node.op_type.rfind("Optional", 0) == 0) return run_optional_op(node, inputs);
  return run_sequence_op(node, inputs);
}

const HostValue& sequence_input(const Node& node, const std::vector<HostValue>& inputs, size_t i) {
  if (i >= inputs.size() || inputs[i].kind != ValueKind::Sequence) {
    node_fail<InvalidModelError>(node, "input " + std::to_string(i) + " must be a sequence, got " +
                                           (i < inputs.size() ? inputs[i].str() : std::string("none")));
  }
  return inputs[i];
}

}  // namespace dnnx
