// EyeLike: input [rows, cols] (any dtype: only its shape is read) -> [rows, cols] of `dtype`
// (default: the input's), 1 where col = row + k, 0 elsewhere.
#include "ops/shape/eye_like.h"

namespace dnnx {

namespace {

// onnx.TensorProto.DataType codes EyeLike's `dtype` may hold here.
enum OnnxType : int64_t { kFloat = 1, kInt32 = 6, kInt64 = 7, kBool = 9, kFloat16 = 10, kDouble = 11 };

std::vector<TensorInfo> infer_eye_like(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "input");
  if (x.shape.size() != 2) node_fail<InvalidModelError>(node, "input must be 2-D, got " + shape_str(x.shape));
  return {TensorInfo{x.shape, eye_like_dtype(node, x.dtype)}};
}

}  // namespace

DType eye_like_dtype(const Node& node, DType input) {
  if (!node.has_attr("dtype")) {
    if (is_half(input)) return DType::Float32;
    return input;
  }
  const int64_t code = node.attr_int("dtype", kFloat);
  switch (code) {
    case kFloat:
    case kFloat16:
    case kDouble: return DType::Float32;
    case kInt32: return DType::Int32;
    case kInt64: return DType::Int64;
    case kBool: return DType::Bool;
    default:
      node_fail<UnsupportedModelError>(node, "dtype " + std::to_string(code) +
                                                 " is not supported (FLOAT, INT32, INT64, BOOL; DOUBLE and "
                                                 "FLOAT16 computed in float32)");
  }
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
