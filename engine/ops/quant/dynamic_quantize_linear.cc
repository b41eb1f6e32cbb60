// DynamicQuantizeLinear (11): x float32 [..] -> y uint8 [..], y_scale float32 [], y_zero_point
// uint8 [], the parameters from x's own range (onnxruntime's GetQuantizationParameter):
//   lo = min(0, min(x)), hi = max(0, max(x)), scale = hi == lo ? 1 : (hi - lo) / 255
//   zero_point = round_half_even(clamp(0 - lo / scale, 0, 255)), y = QuantizeLinear(x, scale, zero_point)
// The kernel is backends/cpu/quant/dynamic_quantize_linear_cpu.cc.
#include "ops/op.h"

namespace dnnx {

namespace {

std::vector<TensorInfo> infer_dynamic_quantize(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "x");
  if (x.dtype != DType::Float32) {
    node_fail<UnsupportedModelError>(node, std::string("x is ") + dtype_name(x.dtype) + ", expected float32");
  }
  return {TensorInfo{x.shape, DType::UInt8}, TensorInfo{{}, DType::Float32}, TensorInfo{{}, DType::UInt8}};
}

}  // namespace

void register_dynamic_quantize_linear_ops(OpRegistry& r) {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({}); };
  def.infer = infer_dynamic_quantize;
  def.min_opset = 11;
  r.add("DynamicQuantizeLinear", std::move(def));
}

}  // namespace dnnx
