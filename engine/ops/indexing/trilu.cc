// Trilu (opset 14): input [..., rows, cols] (any dtype), k (optional int64 scalar, default 0) ->
// the same shape, keeping the upper (upper = 1, the default: col - row >= k) or lower
// (col - row <= k) triangle of every matrix and zeroing the rest. k is read when the kernel
// runs (it changes no shape).
#include "ops/const_inputs.h"

namespace dnnx {

namespace {

std::vector<TensorInfo> infer_trilu(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "input");
  if (x.shape.size() < 2) node_fail<InvalidModelError>(node, "input must have rank >= 2, got " + shape_str(x.shape));
  if (input_present(inputs, 1)) {
    const TensorInfo& k = inputs[1].info;
    if (k.dtype != DType::Int64 || numel(k.shape) != 1 || k.shape.size() > 1) {
      node_fail<InvalidModelError>(node, std::string("k must be an int64 scalar, got ") + dtype_name(k.dtype) + " " +
                                             shape_str(k.shape));
    }
  }
  return {x};
}

}  // namespace

void register_trilu_ops(OpRegistry& r) {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({"upper"}); };
  def.infer = infer_trilu;
  def.min_opset = 14;
  r.add("Trilu", std::move(def));
}

}  // namespace dnnx
