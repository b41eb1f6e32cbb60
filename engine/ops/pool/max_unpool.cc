// MaxUnpool (opset 9; 11, 22 the same meaning): scatters X [N, C, spatial...] into zeros at the
// flat indices I (int64, X's shape: MaxPool's Indices output, indexing the whole output tensor)
// -> Y [N, C, out...]: out[d] = (in[d] - 1) * strides[d] - pads_begin[d] - pads_end[d] +
// kernel_shape[d], or the shape the optional output_shape input gives (known when planning;
// onnxruntime's meaning: I then indexes that tensor, which the kernel checks at run time).
#include "ops/const_inputs.h"
#include "ops/op.h"

namespace dnnx {

namespace {

constexpr int kMaxUnpoolOpset = 9;

std::vector<TensorInfo> infer_max_unpool(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  require_float(node, x, "input X");
  const TensorInfo& indices = require_input(node, inputs, 1, "I");
  if (indices.dtype != DType::Int64 || indices.shape != x.shape) {
    node_fail<InvalidModelError>(node, "I " + shape_str(indices.shape) + " (" + dtype_name(indices.dtype) +
                                           ") must be int64 of X's shape " + shape_str(x.shape));
  }
  const Shape kernel = node.attr_ints("kernel_shape", {});
  if (kernel.empty() || x.shape.size() != kernel.size() + 2) {
    node_fail<InvalidModelError>(node, "kernel_shape " + shape_str(kernel) + " must have one value per spatial dim of X " +
                                           shape_str(x.shape));
  }
  const size_t r = kernel.size();
  const Shape strides = attr_ints_of_size(node, "strides", r, 1);
  const Shape pads = attr_ints_of_size(node, "pads", 2 * r, 0);
  Shape y = {x.shape[0], x.shape[1]};
  for (size_t d = 0; d < r; ++d) {
    y.push_back((x.shape[2 + d] - 1) * strides[d] - pads[d] - pads[r + d] + kernel[d]);
    if (y.back() < 0) node_fail<InvalidModelError>(node, "the output shape " + shape_str(y) + " is negative");
  }
  if (const auto given = optional_constant_ints(node, inputs, 2, "output_shape")) {
    if (given->size() != y.size()) {
      node_fail<InvalidModelError>(node, "output_shape " + shape_str(*given) + " must have X's rank " +
                                             std::to_string(y.size()));
    }
    for (size_t d = 0; d < y.size(); ++d) {
      if ((*given)[d] < 0) node_fail<InvalidModelError>(node, "output_shape " + shape_str(*given) + " is negative");
    }
    y = *given;
  }
  return {TensorInfo{y, x.dtype}};
}

}  // namespace

void register_max_unpool_ops(OpRegistry& r) {
  OpDef def;
  def.min_opset = kMaxUnpoolOpset;
  def.validate = [](const Node& node) { node.expect_only_attrs({"kernel_shape", "pads", "strides"}); };
  def.infer = infer_max_unpool;
  def.value_inputs = {2};
  r.add("MaxUnpool", std::move(def));
}

}  // namespace dnnx
