// com.microsoft's QLinearConcat (1): Y_scale, Y_zero_point, then (X_i, X_scale_i, X_zero_point_i)
// for each input -> Y, Concat along `axis` (required) of int8 or uint8 tensors of one type. An
// input whose scale and zero point equal Y's is copied; any other goes through onnxruntime's
// 256-entry table, quantize(X_scale * (x - X_zp), Y_scale, Y_zp). The kernel is
// backends/cpu/quant/qlinear_concat_cpu.cc.
#include "ops/quant/int_matmul.h"

namespace dnnx {

namespace {

void validate_qlinear_concat(const Node& node) {
  node.expect_only_attrs({"axis"});
  if (!node.has_attr("axis")) node_fail<InvalidModelError>(node, "attribute 'axis' is required");
  if (node.inputs.size() < 5 || (node.inputs.size() - 2) % 3 != 0) {
    node_fail<InvalidModelError>(node, "takes Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) per input; got " +
                                           std::to_string(node.inputs.size()) + " inputs");
  }
}

std::vector<TensorInfo> infer_qlinear_concat(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& y_scale = require_input(node, inputs, 0, "Y_scale");
  const TensorInfo& y_zp = require_input(node, inputs, 1, "Y_zero_point");
  require_int8_type(node, y_zp, "Y_zero_point");
  if (y_scale.dtype != DType::Float32) node_fail<UnsupportedModelError>(node, "Y_scale must be float32");
  require_one_value(node, y_scale.shape, "Y_scale");
  require_one_value(node, y_zp.shape, "Y_zero_point");
  Shape out;
  int64_t axis = 0;
  for (size_t i = 2; i < inputs.size(); i += 3) {
    const TensorInfo& x = require_input(node, inputs, i, "X");
    const TensorInfo& scale = require_input(node, inputs, i + 1, "X_scale");
    const TensorInfo& zp = require_input(node, inputs, i + 2, "X_zero_point");
    if (x.dtype != y_zp.dtype || zp.dtype != y_zp.dtype) {
      node_fail<InvalidModelError>(node, "input " + std::to_string(i) + " (" + x.str() + ") and its zero point must be " +
                                             dtype_name(y_zp.dtype) + ", Y_zero_point's type");
    }
    if (scale.dtype != DType::Float32) node_fail<UnsupportedModelError>(node, "the scales must be float32");
    require_one_value(node, scale.shape, "X_scale");
    require_one_value(node, zp.shape, "X_zero_point");
    if (i == 2) {
      out = x.shape;
      axis = normalize_axis(node, node.attr_int("axis", 0), static_cast<int64_t>(x.shape.size()));
      continue;
    }
    bool fits = x.shape.size() == out.size();
    for (size_t d = 0; fits && d < out.size(); ++d) fits = static_cast<int64_t>(d) == axis || x.shape[d] == out[d];
    if (!fits) {
      node_fail<InvalidModelError>(node, "input " + shape_str(x.shape) + " does not fit " + shape_str(out) +
                                             " along axis " + std::to_string(axis));
    }
    out[axis] += x.shape[axis];
  }
  return {TensorInfo{out, y_zp.dtype}};
}

}  // namespace

void register_qlinear_concat_ops(OpRegistry& r) {
  OpDef def;
  def.validate = validate_qlinear_concat;
  def.infer = infer_qlinear_concat;
  def.min_opset = 1;
  r.add(op_key(kMicrosoftDomain, "QLinearConcat"), std::move(def));
}

}  // namespace dnnx
