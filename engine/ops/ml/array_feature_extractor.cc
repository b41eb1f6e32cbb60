// ArrayFeatureExtractor (ai.onnx.ml 1), with onnxruntime's semantics:
//   X [.., N] of float32, float64, int32, int64 or string; Y int64 indices (any shape, K values)
//   -> Z [.., K] (a 1-D X gives [1, K], as onnxruntime keeps for backward compatibility):
//   Z[.., j] = X[.., Y[j]]. onnxruntime refuses a scalar X and an empty Y; an index outside
//   [0, N) is refused at run time (onnxruntime checks only the upper bound).
// The kernel is backends/cpu/ml/array_feature_extractor_cpu.cc.
#include "ops/ml/ml_attrs.h"
#include "ops/op.h"

namespace dnnx {

namespace {

std::vector<TensorInfo> infer_array_feature_extractor(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  const TensorInfo& y = require_input(node, inputs, 1, "Y");
  const DType t = x.dtype;
  if (t != DType::Float32 && t != DType::Float64 && t != DType::Int32 && t != DType::Int64 && t != DType::String) {
    node_fail<UnsupportedModelError>(node, std::string("X is ") + dtype_name(t) +
                                               ", expected float32, float64, int32, int64 or string");
  }
  if (y.dtype != DType::Int64) node_fail<InvalidModelError>(node, std::string("Y is ") + dtype_name(y.dtype) + ", expected int64");
  if (x.shape.empty()) node_fail<InvalidModelError>(node, "X must have at least one dim, got a scalar");
  const int64_t k = numel(y.shape);
  if (k == 0) node_fail<InvalidModelError>(node, "Y holds no index (shape " + shape_str(y.shape) + ")");
  Shape z = x.shape;
  if (z.size() == 1) z = {1, k};
  else z.back() = k;
  return {TensorInfo{z, t}};
}

}  // namespace

void register_array_feature_extractor_ops(OpRegistry& r) {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({}); };
  def.infer = infer_array_feature_extractor;
  def.min_opset = 1;
  r.add(op_key(kMlDomain, "ArrayFeatureExtractor"), std::move(def));
}

}  // namespace dnnx
