// The ops over sequences and optionals (Note [sequences] in runtime/values/host_value.h), run by
// the engine on the host between plan stages, with onnxruntime's semantics. Their OpDefs
// (ops/sequence/) check attributes and arity at load and mark them value_shaped.
#pragma once
#include <vector>

#include "runtime/values/host_value.h"

namespace dnnx {

class Engine;

// Whether the engine runs `node` here (a Sequence*, SplitToSequence, ConcatFromSequence or
// Optional* op, or SequenceMap).
bool is_value_op(const Node& node);

// The node's outputs from its inputs (an omitted input: a tensor value with no tensor).
std::vector<HostValue> run_value_op(Engine& owner, const Node& node, const std::vector<HostValue>& inputs);

// One op group each (sequence_ops.cc, split_concat.cc, optional_ops.cc, sequence_map.cc).
std::vector<HostValue> run_sequence_op(const Node& node, const std::vector<HostValue>& inputs);
std::vector<HostValue> run_split_to_sequence(const Node& node, const std::vector<HostValue>& inputs);
std::vector<HostValue> run_concat_from_sequence(const Node& node, const std::vector<HostValue>& inputs);
std::vector<HostValue> run_optional_op(const Node& node, const std::vector<HostValue>& inputs);
std::vector<HostValue> run_sequence_map(Engine& owner, const Node& node, const std::vector<HostValue>& inputs);

// The sequence at input `i`; an InvalidModelError naming the node otherwise.
const HostValue& sequence_input(const Node& node, const std::vector<HostValue>& inputs, size_t i);

}  // namespace dnnx
