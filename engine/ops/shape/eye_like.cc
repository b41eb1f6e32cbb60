// EyeLike: input [rows, cols] (any dtype: only its shape is read) -> [rows, cols] of `dtype`
// (default: the input's), 1 where col = row + k, 0 elsewhere.
#include "ops/shape/eye_like.h"
#include "ops/layout/cast.h"

namespace dnnx {

namespace {

std::vector<TensorInfo> infer_eye_like(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "input");
  if (x.shape.size() != 2) node_fail<InvalidModelError>(node, "input must be 2-D, got " + shape_str(x.shape));
  return {TensorInfo{x.shape, eye_like_dtype(node, x.dtype)}};
}

}  // namespace

DType eye_like_dtype(const Node& node, DType input) {
  DType out = input;  // default: the input's type
  if (node.has_attr("dtype") && !dtype_from_onnx(node.attr_int("dtype", 1), out)) {
    node_fail<UnsupportedModelError>(node, "dtype " + std::to_string(node.attr_int("dtype", 1)) +
                                               " is not a tensor type dnnx has");
  }
  if (is_storage_only(out)) {
    node_fail<UnsupportedModelError>(node, std::string("dtype ") + dtype_name(out) +
                                               " is storage-only: EyeLike makes numbers or bools");
  }
  return out;
}

void register_eye_like_ops(OpRegistry& r) {
  OpDef eye;
  eye.validate = [](const Node& node) {
    node.expect_only_attrs({"dtype", "k"});
    eye_like_dtype(node, DType::Float32);
  };
  eye.infer = infer_eye_like;
  eye.reads_input0_shape_only = true;
  eye.min_opset = 9;
  r.add("EyeLike", std::move(eye));
}

}  // namespace dnnx
