// Scaler (ai.onnx.ml 1), with onnxruntime's semantics: X float32, float64, int64 or int32 [..]
// (at least one dim) -> Y float32 of X's shape, Y = (X - offset[c]) * scale[c], c = i mod S with
// S = X's dim 1 (dim 0 for a 1-D X, as onnxruntime counts it); scale and offset have the same,
// non-zero length, S or 1. A float64 X is computed in float64, the others in float32, then
// rounded to float32. The kernel is backends/cpu/ml/scaler_cpu.cc.
#include "ops/ml/ml_attrs.h"
#include "ops/op.h"

namespace dnnx {

namespace {

void validate_scaler(const Node& node) {
  node.expect_only_attrs({"scale", "offset"});
  const size_t scale = node.attr_floats("scale", {}).size(), offset = node.attr_floats("offset", {}).size();
  if (scale == 0) node_fail<InvalidModelError>(node, "attribute 'scale' is empty or missing");
  if (scale != offset) {
    node_fail<InvalidModelError>(node, "scale has " + std::to_string(scale) + " values but offset " +
                                           std::to_string(offset) + ": they must have the same length");
  }
}

std::vector<TensorInfo> infer_scaler(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  if (x.dtype != DType::Float32 && x.dtype != DType::Float64 && x.dtype != DType::Int64 && x.dtype != DType::Int32) {
    node_fail<UnsupportedModelError>(node, std::string("X is ") + dtype_name(x.dtype) +
                                               ", expected float32, float64, int64 or int32");
  }
  if (x.shape.empty()) node_fail<InvalidModelError>(node, "X must have at least one dim, got a scalar");
  const int64_t stride = x.shape.size() == 1 ? x.shape[0] : x.shape[1];
  const int64_t count = static_cast<int64_t>(node.attr_floats("scale", {}).size());
  if (count != 1 && count != stride) {
    node_fail<InvalidModelError>(node, "scale and offset hold " + std::to_string(count) + " values: expected 1 or " +
                                           std::to_string(stride) + " (X " + shape_str(x.shape) + "'s features)");
  }
  return {TensorInfo{x.shape, DType::Float32}};
}

}  // namespace

void register_scaler_ops(OpRegistry& r) {
  OpDef def;
  def.validate = validate_scaler;
  def.infer = infer_scaler;
  def.min_opset = 1;
  r.add(op_key(kMlDomain, "Scaler"), std::move(def));
}

}  // namespace dnnx
