// Binarizer (ai.onnx.ml 1), with onnxruntime's semantics: X float32 [..] -> Y float32 [..],
// Y = X > threshold ? 1 : 0 (threshold default 0). onnxruntime registers float32 only (onnx's
// schema also lists float64 and the integers: refused here as there) and fails on a NaN element,
// naming its index; so does dnnx, at run time.
// The kernel is backends/cpu/ml/binarizer_cpu.cc.
#include "ops/ml/ml_attrs.h"
#include "ops/op.h"

namespace dnnx {

namespace {

std::vector<TensorInfo> infer_binarizer(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  if (x.dtype != DType::Float32) {
    node_fail<UnsupportedModelError>(node, std::string("X is ") + dtype_name(x.dtype) +
                                               ", expected float32 (onnxruntime's one Binarizer type)");
  }
  return {x};
}

}  // namespace

void register_binarizer_ops(OpRegistry& r) {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({"threshold"}); };
  def.infer = infer_binarizer;
  def.min_opset = 1;
  r.add(op_key(kMlDomain, "Binarizer"), std::move(def));
}

}  // namespace dnnx
