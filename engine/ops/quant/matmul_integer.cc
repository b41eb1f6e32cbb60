// MatMulInteger (10): A [..., M, K] int8/uint8, B [..., K, N] int8/uint8, optional zero points
//   -> Y int32 = (A - a_zero_point) x (B - b_zero_point), numpy.matmul's shapes.
// QLinearMatMul (10, 21): a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point
//   -> y of y_zero_point's type = saturate(round((a - a_zp) x (b - b_zp) * a_scale * b_scale / y_scale) + y_zp).
// Where each parameter may vary: Note [integer matmul parameters] (ops/quant/int_matmul.h); the
// kernels are backends/cpu/quant/matmul_integer_cpu.cc.
#include "ops/quant/int_matmul.h"

namespace dnnx {

namespace {

const TensorInfo* optional_input(const std::vector<ValueInfo>& inputs, size_t i) {
  return i < inputs.size() && inputs[i].present ? &inputs[i].info : nullptr;
}

void require_zero_point_type(const Node& node, const TensorInfo* zp, const TensorInfo& operand, const char* what) {
  if (zp && zp->dtype != operand.dtype) {
    node_fail<InvalidModelError>(node, std::string(what) + " is " + dtype_name(zp->dtype) + ", its operand " +
                                           dtype_name(operand.dtype) + ": they share one type");
  }
}

void require_float_scale(const Node& node, const TensorInfo& scale, const char* what) {
  if (!(scale.dtype == DType::Float32 || (node.opset >= 21 && is_half(scale.dtype)))) {
    node_fail<UnsupportedModelError>(node, std::string(what) + " is " + dtype_name(scale.dtype) + ", expected float32" +
                                               (node.opset >= 21 ? ", float16 or bfloat16" : ""));
  }
}

std::vector<TensorInfo> infer_matmul_integer(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& a = require_input(node, inputs, 0, "A");
  const TensorInfo& b = require_input(node, inputs, 1, "B");
  require_int8_type(node, a, "A");
  require_int8_type(node, b, "B");
  const MatMulGeometry g = matmul_geometry(node, a.shape, b.shape);
  if (const TensorInfo* zp = optional_input(inputs, 2)) {
    require_zero_point_type(node, zp, a, "a_zero_point");
    a_param_spread(node, g, zp->shape, "a_zero_point", true);
  }
  if (const TensorInfo* zp = optional_input(inputs, 3)) {
    require_zero_point_type(node, zp, b, "b_zero_point");
    b_param_spread(node, g, b.shape, zp->shape, "b_zero_point");
  }
  return {TensorInfo{g.out, DType::Int32}};
}

std::vector<TensorInfo> infer_qlinear_matmul(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& a = require_input(node, inputs, 0, "a");
  const TensorInfo& a_scale = require_input(node, inputs, 1, "a_scale");
  const TensorInfo& a_zp = require_input(node, inputs, 2, "a_zero_point");
  const TensorInfo& b = require_input(node, inputs, 3, "b");
  const TensorInfo& b_scale = require_input(node, inputs, 4, "b_scale");
  const TensorInfo& b_zp = require_input(node, inputs, 5, "b_zero_point");
  const TensorInfo& y_scale = require_input(node, inputs, 6, "y_scale");
  const TensorInfo& y_zp = require_input(node, inputs, 7, "y_zero_point");
  require_int8_type(node, a, "a");
  require_int8_type(node, b, "b");
  require_int8_type(node, y_zp, "y_zero_point");
  require_zero_point_type(node, &a_zp, a, "a_zero_point");
  require_zero_point_type(node, &b_zp, b, "b_zero_point");
  require_float_scale(node, a_scale, "a_scale");
  require_float_scale(node, b_scale, "b_scale");
  require_float_scale(node, y_scale, "y_scale");
  const MatMulGeometry g = matmul_geometry(node, a.shape, b.shape);
  require_one_value(node, a_scale.shape, "a_scale");
  require_one_value(node, a_zp.shape, "a_zero_point");
  require_one_value(node, y_scale.shape, "y_scale");
  require_one_value(node, y_zp.shape, "y_zero_point");
  const ParamSpread scales = b_param_spread(node, g, b.shape, b_scale.shape, "b_scale");
  const ParamSpread zps = b_param_spread(node, g, b.shape, b_zp.shape, "b_zero_point");
  if (zps != ParamSpread::PerTensor && scales != zps) {
    node_fail<InvalidModelError>(node, "b_zero_point " + shape_str(b_zp.shape) + " and b_scale " +
                                           shape_str(b_scale.shape) + " must spread alike");
  }
  return {TensorInfo{g.out, y_zp.dtype}};
}

}  // namespace

void register_matmul_integer_ops(OpRegistry& r) {
  OpDef mm;
  mm.validate = [](const Node& node) { node.expect_only_attrs({}); };
  mm.infer = infer_matmul_integer;
  mm.min_opset = 10;
  r.add("MatMulInteger", std::move(mm));

  OpDef q;
  q.validate = [](const Node& node) { node.expect_only_attrs({}); };
  q.infer = infer_qlinear_matmul;
  q.min_opset = 10;
  r.add("QLinearMatMul", std::move(q));
}

}  // namespace dnnx
