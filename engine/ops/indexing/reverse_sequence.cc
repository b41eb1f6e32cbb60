// ReverseSequence (opset 10): input [time, batch, ...] or [batch, time, ...] (time_axis and
// batch_axis are 0 and 1, either way round; any dtype), sequence_lens [batch] (int64) -> the same
// shape: for batch entry b, the first sequence_lens[b] steps along time reversed, the rest copied.
// The lengths are read and checked (0 <= len <= time) when the kernel runs.
#include "ops/op.h"

namespace dnnx {

namespace {

std::vector<TensorInfo> infer_reverse_sequence(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "input");
  const TensorInfo& lens = require_input(node, inputs, 1, "sequence_lens");
  if (x.shape.size() < 2) node_fail<InvalidModelError>(node, "input must have rank >= 2, got " + shape_str(x.shape));
  const int64_t batch_axis = node.attr_int("batch_axis", 1);
  const int64_t time_axis = node.attr_int("time_axis", 0);
  if (!((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0))) {
    node_fail<InvalidModelError>(node, "batch_axis (" + std::to_string(batch_axis) + ") and time_axis (" +
                                           std::to_string(time_axis) + ") must be 0 and 1, either way round");
  }
  if (lens.dtype != DType::Int64 || lens.shape != Shape{x.shape[batch_axis]}) {
    node_fail<InvalidModelError>(node, std::string("sequence_lens must be int64 [batch] = [") +
                                           std::to_string(x.shape[batch_axis]) + "], got " + dtype_name(lens.dtype) +
                                           " " + shape_str(lens.shape));
  }
  return {x};
}

}  // namespace

void register_reverse_sequence_ops(OpRegistry& r) {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({"batch_axis", "time_axis"}); };
  def.infer = infer_reverse_sequence;
  def.min_opset = 10;
  r.add("ReverseSequence", std::move(def));
}

}  // namespace dnnx
