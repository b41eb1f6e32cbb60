// Pow and PRelu: the two broadcasting float ops of issue #15.
//   Pow    Z = X ^ Y, numpy-style (multidirectional) broadcast; X a float type, int32 or int64
//          (onnx's T), Y a float type or any integer type (onnx's T1); Z has X's type. An
//          integer base is onnxruntime's double pow cast back (Note [integer pow] in
//          backends/cpu/elementwise/pow_prelu_cpu.cc)
//   PRelu  Y = X < 0 ? slope * X : X, slope unidirectionally broadcast to X (ONNX's rule: slope
//          broadcasts to X's shape, never the other way), so Y has X's shape
#include "ops/op.h"

namespace dnnx {

namespace {

std::vector<TensorInfo> infer_pow(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  const TensorInfo& y = require_input(node, inputs, 1, "Y");
  if (!is_floating(x.dtype) && !is_index(x.dtype)) {
    node_fail<UnsupportedModelError>(node, std::string("base X must be a float type, int32 or int64, got ") +
                                               dtype_name(x.dtype));
  }
  if (!is_floating(y.dtype) && !is_integer(y.dtype)) {
    node_fail<UnsupportedModelError>(node, std::string("exponent Y must be a float or integer type, got ") +
                                               dtype_name(y.dtype));
  }
  return {TensorInfo{broadcast_shapes(node, x.shape, y.shape), x.dtype}};
}

std::vector<TensorInfo> infer_prelu(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  const TensorInfo& slope = require_input(node, inputs, 1, "slope");
  require_float(node, x, "input X");
  require_float(node, slope, "slope");
  if (broadcast_shapes(node, x.shape, slope.shape) != x.shape) {
    node_fail<InvalidModelError>(node, "slope " + shape_str(slope.shape) + " does not broadcast to X " +
                                           shape_str(x.shape));
  }
  return {x};
}

OpDef op(std::function<std::vector<TensorInfo>(const Node&, const std::vector<ValueInfo>&)> infer) {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({}); };
  def.infer = std::move(infer);
  return def;
}

}  // namespace

void register_pow_prelu_ops(OpRegistry& r) {
  r.add("Pow", op(infer_pow));
  r.add("PRelu", op(infer_prelu));
}

}  // namespace dnnx
