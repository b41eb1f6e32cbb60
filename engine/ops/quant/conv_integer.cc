// ConvInteger (10): x, w int8/uint8, optional x_zero_point (one value) and w_zero_point (one
//   value or [M]) -> y int32 = Conv(x - x_zero_point, w - w_zero_point), Conv's attributes.
// QLinearConv (10): x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point,
//   optional B int32 [M] -> y of y_zero_point's type
//   = saturate(round((Conv(x - x_zp, w - w_zp) + B) * x_scale * w_scale / y_scale) + y_zp),
//   w_scale and w_zero_point one value or per output channel [M] (Note [requantization]).
// Padding reads x_zero_point (a zero after the subtraction), as onnxruntime pads. The kernels
// are backends/cpu/quant/conv_integer_cpu.cc.
#include "ops/quant/int_conv.h"
#include "ops/quant/int_matmul.h"

namespace dnnx {

ConvGeometry int_conv_geometry(const Node& node, const Shape& x, const Shape& w) {
  const size_t rank = x.size();
  if (rank < 2 + kMinSpatialRank || rank > 2 + kMaxSpatialRank) {
    node_fail<UnsupportedModelError>(node, "X " + shape_str(x) + " must be [N, C, spatial...] with 1 to 3 spatial dims");
  }
  if (w.size() != rank) node_fail<InvalidModelError>(node, "W " + shape_str(w) + " must have the rank of X " + shape_str(x));
  const int64_t group = node.attr_int("group", 1);
  if (group < 1 || w[1] * group != x[1] || w[0] % group != 0) {
    node_fail<InvalidModelError>(node, "X " + shape_str(x) + " and W " + shape_str(w) + " do not fit group " +
                                           std::to_string(group) + " (X's channels = W[1] * group, W[0] a multiple of group)");
  }
  const Shape spatial(x.begin() + 2, x.end());
  const Shape kernel(w.begin() + 2, w.end());
  return make_conv_geometry(node, WindowOp::Conv, spatial, kernel);
}

Shape int_conv_output(const Shape& x, const Shape& w, const ConvGeometry& g) {
  Shape y{x[0], w[0]};
  y.insert(y.end(), g.output.begin(), g.output.end());
  return y;
}

bool per_channel_param(const Node& node, const Shape& w, const Shape& param, const char* what) {
  if (param.empty() || (param.size() == 1 && param[0] == 1)) return false;
  if (param.size() == 1 && param[0] == w[0]) return true;
  node_fail<InvalidModelError>(node, std::string(what) + " must be a scalar or [M] = [" + std::to_string(w[0]) +
                                         "] (W " + shape_str(w) + "), got " + shape_str(param));
}

namespace {

const TensorInfo* optional_input(const std::vector<ValueInfo>& inputs, size_t i) {
  return i < inputs.size() && inputs[i].present ? &inputs[i].info : nullptr;
}

void require_same_type(const Node& node, const TensorInfo& zp, const TensorInfo& operand, const char* what) {
  if (zp.dtype != operand.dtype) {
    node_fail<InvalidModelError>(node, std::string(what) + " is " + dtype_name(zp.dtype) + ", its operand " +
                                           dtype_name(operand.dtype) + ": they share one type");
  }
}

void validate_int_conv(const Node& node) {
  node.expect_only_attrs({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  check_window_attrs(node, WindowOp::Conv);
}

std::vector<TensorInfo> infer_conv_integer(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "x");
  const TensorInfo& w = require_input(node, inputs, 1, "w");
  require_int8_type(node, x, "x");
  require_int8_type(node, w, "w");
  const ConvGeometry g = int_conv_geometry(node, x.shape, w.shape);
  if (const TensorInfo* zp = optional_input(inputs, 2)) {
    require_same_type(node, *zp, x, "x_zero_point");
    require_one_value(node, zp->shape, "x_zero_point");
  }
  if (const TensorInfo* zp = optional_input(inputs, 3)) {
    require_same_type(node, *zp, w, "w_zero_point");
    per_channel_param(node, w.shape, zp->shape, "w_zero_point");
  }
  return {TensorInfo{int_conv_output(x.shape, w.shape, g), DType::Int32}};
}

std::vector<TensorInfo> infer_qlinear_conv(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "x");
  const TensorInfo& x_scale = require_input(node, inputs, 1, "x_scale");
  const TensorInfo& x_zp = require_input(node, inputs, 2, "x_zero_point");
  const TensorInfo& w = require_input(node, inputs, 3, "w");
  const TensorInfo& w_scale = require_input(node, inputs, 4, "w_scale");
  const TensorInfo& w_zp = require_input(node, inputs, 5, "w_zero_point");
  const TensorInfo& y_scale = require_input(node, inputs, 6, "y_scale");
  const TensorInfo& y_zp = require_input(node, inputs, 7, "y_zero_point");
  require_int8_type(node, x, "x");
  require_int8_type(node, w, "w");
  require_int8_type(node, y_zp, "y_zero_point");
  require_same_type(node, x_zp, x, "x_zero_point");
  require_same_type(node, w_zp, w, "w_zero_point");
  for (const TensorInfo* s : {&x_scale, &w_scale, &y_scale}) {
    if (s->dtype != DType::Float32) {
      node_fail<UnsupportedModelError>(node, std::string("the scales must be float32, got ") + dtype_name(s->dtype));
    }
  }
  const ConvGeometry g = int_conv_geometry(node, x.shape, w.shape);
  require_one_value(node, x_scale.shape, "x_scale");
  require_one_value(node, x_zp.shape, "x_zero_point");
  require_one_value(node, y_scale.shape, "y_scale");
  require_one_value(node, y_zp.shape, "y_zero_point");
  per_channel_param(node, w.shape, w_scale.shape, "w_scale");
  per_channel_param(node, w.shape, w_zp.shape, "w_zero_point");
  if (const TensorInfo* b = optional_input(inputs, 8)) {
    if (b->dtype != DType::Int32 || b->shape != Shape{w.shape[0]}) {
      node_fail<InvalidModelError>(node, "B must be int32 [M] = [" + std::to_string(w.shape[0]) + "], got " + b->str());
    }
  }
  return {TensorInfo{int_conv_output(x.shape, w.shape, g), y_zp.dtype}};
}

}  // namespace

void register_conv_integer_ops(OpRegistry& r) {
  OpDef ci;
  ci.validate = validate_int_conv;
  ci.infer = infer_conv_integer;
  ci.min_opset = 10;
  r.add("ConvInteger", std::move(ci));

  OpDef q;
  q.validate = validate_int_conv;
  q.infer = infer_qlinear_conv;
  q.min_opset = 10;
  r.add("QLinearConv", std::move(q));
}

}  // namespace dnnx
