// TensorScatter (opset 24): a KV cache update. past_cache [batch, ..., max_seq, ...] (any dtype),
// update of past_cache's shape but `sequence_length` <= max_seq along `axis` (default -2, never
// 0, the batch), write_indices [batch] (int64, optional: zeros) -> present_cache, past_cache's
// shape: past_cache with, for every prefix index p (the dims before axis, p[0] the batch entry b),
// update's rows s written at row write_indices[b] + s along axis (modulo max_seq for
// mode="circular"; mode="linear" needs them inside [0, max_seq): checked when the kernel runs).
#include "ops/op.h"

namespace dnnx {

namespace {

constexpr size_t kWriteIndices = 2;

void validate_tensor_scatter(const Node& node) {
  node.expect_only_attrs({"mode", "axis"});
  const std::string mode = node.attr_string("mode", "linear");
  if (mode != "linear" && mode != "circular") {
    node_fail<InvalidModelError>(node, "mode '" + mode + "' must be 'linear' or 'circular'");
  }
}

std::vector<TensorInfo> infer_tensor_scatter(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& past = require_input(node, inputs, 0, "past_cache");
  const TensorInfo& update = require_input(node, inputs, 1, "update");
  const int64_t rank = static_cast<int64_t>(past.shape.size());
  if (rank < 2) node_fail<InvalidModelError>(node, "past_cache must have rank >= 2, got " + shape_str(past.shape));
  const int64_t axis = normalize_axis(node, node.attr_int("axis", -2), rank);
  if (axis == 0) node_fail<InvalidModelError>(node, "axis must not be 0 (the batch dim)");
  if (update.dtype != past.dtype) {
    node_fail<InvalidModelError>(node, std::string("update must have past_cache's type ") + dtype_name(past.dtype) +
                                           ", got " + dtype_name(update.dtype));
  }
  bool fits = update.shape.size() == past.shape.size();
  for (int64_t d = 0; fits && d < rank; ++d) {
    fits = d == axis ? update.shape[d] <= past.shape[d] : update.shape[d] == past.shape[d];
  }
  if (!fits) {
    node_fail<InvalidModelError>(node, "update " + shape_str(update.shape) + " must have past_cache " +
                                           shape_str(past.shape) + "'s shape, with at most " +
                                           std::to_string(past.shape[axis]) + " along axis " + std::to_string(axis));
  }
  if (inputs.size() > kWriteIndices && inputs[kWriteIndices].present) {
    const TensorInfo& w = inputs[kWriteIndices].info;
    if (w.dtype != DType::Int64 || w.shape != Shape{past.shape[0]}) {
      node_fail<InvalidModelError>(node, "write_indices must be int64 [batch] = [" + std::to_string(past.shape[0]) +
                                             "], got " + dtype_name(w.dtype) + " " + shape_str(w.shape));
    }
  }
  return {past};
}

}  // namespace

void register_tensor_scatter_ops(OpRegistry& r) {
  OpDef def;
  def.validate = validate_tensor_scatter;
  def.infer = infer_tensor_scatter;
  def.min_opset = 24;
  r.add("TensorScatter", std::move(def));
}

}  // namespace dnnx
