// Gather: data [d0, ..., d_axis, ..., dn] (any dtype), indices [i...] (int32 or int64) ->
// [d0, ..., i..., ..., dn]: the slices of `axis` the indices name (negative counts from the
// end). Constant indices are checked at load; computed ones when the kernel runs.
#include "ops/op.h"

namespace dnnx {

namespace {

std::vector<TensorInfo> infer_gather(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& data = require_input(node, inputs, 0, "data");
  const TensorInfo& indices = require_input(node, inputs, 1, "indices");
  if (!is_index(indices.dtype)) {
    node_fail<InvalidModelError>(node, std::string("indices must be int32 or int64, got ") + dtype_name(indices.dtype));
  }
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  if (rank == 0) node_fail<InvalidModelError>(node, "data must have rank >= 1, got a scalar");
  const int64_t axis = normalize_axis(node, node.attr_int("axis", 0), rank);
  const int64_t size = data.shape[axis];
  if (inputs[1].constant) {
    for (int64_t i : inputs[1].constant->to_int64()) {
      if (i < -size || i >= size) {
        node_fail<InvalidModelError>(node, "index " + std::to_string(i) + " is out of range for axis " +
                                               std::to_string(axis) + " of data " + shape_str(data.shape));
      }
    }
  }
  Shape out(data.shape.begin(), data.shape.begin() + axis);
  out.insert(out.end(), indices.shape.begin(), indices.shape.end());
  out.insert(out.end(), data.shape.begin() + axis + 1, data.shape.end());
  return {TensorInfo{out, data.dtype}};
}

}  // namespace

void register_gather_ops(OpRegistry& r) {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({"axis"}); };
  def.infer = infer_gather;
  def.min_opset = 1;
  r.add("Gather", std::move(def));
}

}  // namespace dnnx
