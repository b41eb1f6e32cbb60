// SequenceEmpty, SequenceConstruct, SequenceAt, SequenceInsert, SequenceErase and SequenceLength
// (opset 11), as onnxruntime runs them (its providers/cpu/sequence/sequence_ops.cc): a position
// is a one-element int32 or int64 tensor, negative positions count from the end, At and Erase
// take [-n, n-1], Insert takes [-n, n]; an inserted tensor has the sequence's element type.
#include "ops/layout/cast.h"
#include "runtime/control/slices.h"
#include "runtime/values/value_ops.h"

namespace dnnx {

namespace {

// A position input in [-n, n - 1] (or [-n, n] with `one_past`) as an index in [0, n] (ORT's ValidateSeqIdx).
size_t position(const Node& node, const HostValue& value, size_t n, bool one_past) {
  const ConstTensor& t = *tensor_of(node, value, "position");
  if (!is_index(t.info.dtype) || numel(t.info.shape) != 1) {
    node_fail<InvalidModelError>(node, "position must be one int32 or int64 value, got " + t.info.str());
  }
  const int64_t size = static_cast<int64_t>(n);
  const int64_t p = int_of(t);
  const int64_t hi = one_past ? size : size - 1;
  if (p < -size || p > hi) {
    node_fail<InvalidModelError>(node, "position " + std::to_string(p) + " is out of range for a sequence of " +
                                           std::to_string(n) + " tensors (it must be in [" + std::to_string(-size) +
                                           ", " + std::to_string(hi) + "])");
  }
  return static_cast<size_t>(p < 0 ? p + size : p);
}

bool given(const std::vector<HostValue>& inputs, size_t i) { return i < inputs.size() && inputs[i].present(); }

std::vector<HostValue> sequence_empty(const Node& node) {
  DType elem = DType::Float32;
  if (node.has_attr("dtype") && !dtype_from_onnx(node.attr_int("dtype", 1), elem)) {
    node_fail<UnsupportedModelError>(node, "dtype " + std::to_string(node.attr_int("dtype", 1)) +
                                               " is not an element type the engine has");
  }
  return {HostValue::sequence(elem, {})};
}

std::vector<HostValue> sequence_construct(const Node& node, const std::vector<HostValue>& inputs) {
  if (inputs.empty()) node_fail<InvalidModelError>(node, "takes at least one tensor");
  std::vector<HostValue> items;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ConstTensorPtr& t = tensor_of(node, inputs[i], "input " + std::to_string(i));
    if (t->info.dtype != inputs[0].tensor->info.dtype) {
      node_fail<InvalidModelError>(node, "every input must have one type: input 0 is " + inputs[0].tensor->info.str() +
                                             ", input " + std::to_string(i) + " is " + t->info.str());
    }
    items.emplace_back(t);
  }
  return {HostValue::sequence(inputs[0].tensor->info.dtype, std::move(items))};
}

std::vector<HostValue> sequence_at(const Node& node, const std::vector<HostValue>& inputs) {
  const HostValue& seq = sequence_input(node, inputs, 0);
  return {seq.items[position(node, inputs.at(1), seq.items.size(), false)]};
}

std::vector<HostValue> sequence_insert(const Node& node, const std::vector<HostValue>& inputs) {
  const HostValue& seq = sequence_input(node, inputs, 0);
  const ConstTensorPtr& t = tensor_of(node, inputs.at(1), "the inserted value");
  if (t->info.dtype != seq.elem) {
    node_fail<InvalidModelError>(node, "the inserted tensor " + t->info.str() + " must have the sequence's element type " +
                                           dtype_name(seq.elem));
  }
  const size_t at = given(inputs, 2) ? position(node, inputs[2], seq.items.size(), true) : seq.items.size();
  HostValue out = seq;
  out.items.insert(out.items.begin() + static_cast<std::ptrdiff_t>(at), HostValue(t));
  return {out};
}

std::vector<HostValue> sequence_erase(const Node& node, const std::vector<HostValue>& inputs) {
  const HostValue& seq = sequence_input(node, inputs, 0);
  if (!given(inputs, 1) && seq.items.empty()) {
    node_fail<InvalidModelError>(node, "cannot erase from an empty sequence");
  }
  const size_t at = given(inputs, 1) ? position(node, inputs[1], seq.items.size(), false) : seq.items.size() - 1;
  HostValue out = seq;
  out.items.erase(out.items.begin() + static_cast<std::ptrdiff_t>(at));
  return {out};
}

}  // namespace

std::vector<HostValue> run_sequence_op(const Node& node, const std::vector<HostValue>& inputs) {
  if (node.op_type == "SequenceEmpty") return sequence_empty(node);
  if (node.op_type == "SequenceConstruct") return sequence_construct(node, inputs);
  if (node.op_type == "SequenceAt") return sequence_at(node, inputs);
  if (node.op_type == "SequenceInsert") return sequence_insert(node, inputs);
  if (node.op_type == "SequenceErase") return sequence_erase(node, inputs);
  if (node.op_type == "SequenceLength") {
    return {HostValue(scalar_int64(static_cast<int64_t>(sequence_input(node, inputs, 0).items.size())))};
  }
  node_fail<InvalidModelError>(node, "is not a sequence op");
}

}  // namespace dnnx
