// Normalizer (ai.onnx.ml 1), with onnxruntime's semantics: X float32, float64, int64 or int32
// [C] or [N, C] -> Y float32 of X's shape, each row divided by its norm (in float32):
//   MAX (the default)  the row's largest value (not its largest magnitude)
//   L1                 the sum of |x|
//   L2                 y = sign(x) * sqrt(x^2 / sum(x^2)), x^2 squared in X's type (an integer
//                      square wraps as onnxruntime's does in practice)
// A row whose norm is 0 is copied unchanged. Higher ranks and scalars are refused.
// The kernel is backends/cpu/ml/normalizer_cpu.cc.
#include "ops/ml/ml_attrs.h"
#include "ops/op.h"

namespace dnnx {

namespace {

void validate_normalizer(const Node& node) {
  node.expect_only_attrs({"norm"});
  const std::string norm = node.attr_string("norm", "MAX");
  if (norm != "MAX" && norm != "L1" && norm != "L2") {
    node_fail<InvalidModelError>(node, "norm must be MAX, L1 or L2, got '" + norm + "'");
  }
}

std::vector<TensorInfo> infer_normalizer(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  if (x.dtype != DType::Float32 && x.dtype != DType::Float64 && x.dtype != DType::Int64 && x.dtype != DType::Int32) {
    node_fail<UnsupportedModelError>(node, std::string("X is ") + dtype_name(x.dtype) +
                                               ", expected float32, float64, int64 or int32");
  }
  if (x.shape.size() != 1 && x.shape.size() != 2) {
    node_fail<InvalidModelError>(node, "X must be [C] or [N, C], got " + shape_str(x.shape));
  }
  return {TensorInfo{x.shape, DType::Float32}};
}

}  // namespace

void register_normalizer_ops(OpRegistry& r) {
  OpDef def;
  def.validate = validate_normalizer;
  def.infer = infer_normalizer;
  def.min_opset = 1;
  r.add(op_key(kMlDomain, "Normalizer"), std::move(def));
}

}  // namespace dnnx
