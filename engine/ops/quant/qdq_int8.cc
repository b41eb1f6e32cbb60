// Int8Conv, Int8Gemm and Int8MatMul: the fused int8 layers that runtime/passes/fuse_qdq_int8.cc
// makes of a QDQ pattern (Note [qdq int8] there); never read from a model (fused = true).
// Inputs (slots fixed; "" where absent):
//   0 x_q  1 x_scale  2 x_zero_point       the activation as the DequantizeLinear read it
//   3 w_q  4 w_scale  5 w_zero_point       the constant weights, scale and zero point one value
//                                          or per output channel
//   6 y_scale  7 y_zero_point              the QuantizeLinear after the layer: Y's type; both
//                                          absent: Y is float32, the sums dequantized
//                                          (Note [int8 float output] in fuse_qdq_int8.cc)
//   8 bias  9 bias_scale                   float32 [M] (bias_scale ""), or int32 [M] with its
//                                          DequantizeLinear's scale (one value or [M])
//   10 r_scale 11 r_zero_point 12 z_q 13 z_scale 14 z_zero_point   a residual Add (Int8Conv
//     only): the layer's own QuantizeLinear (r), then + DequantizeLinear(z_q), then Y's
//   15 bn_mult 16 bn_add                   float32 [M]: a BatchNormalization taken in (Int8Conv
//                                          only, Note [int8 batchnorm]): y = v * bn_mult + bn_add
//                                          before the Relu and Y's quantization (with a
//                                          residual: before r's quantization)
// Attributes: the base op's (Conv's window attributes; Gemm's transB), and relu (0/1): a Relu
// before Y's QuantizeLinear; clip_min and clip_max (floats): a Clip there instead (Note [int8
// clip] in runtime/passes/fuse_qdq_int8.cc: Y's integer range narrowed to their quantized
// values). Shapes: the base op's (MatMul: x [..., M, K] x w [K, N]; Gemm:
// x [M, K], w [K, N] or [N, K] with transB). The CPU kernel: backends/cpu/quant/qdq_int8_cpu.cc.
#include "ops/conv/conv_geometry.h"
#include "ops/quant/int_conv.h"
#include "ops/quant/int_matmul.h"

namespace dnnx {

namespace {

std::vector<TensorInfo> checked_output(const Node& node, const std::vector<ValueInfo>& inputs, Shape out) {
  const TensorInfo& x = require_input(node, inputs, 0, "x");
  const TensorInfo& w = require_input(node, inputs, 3, "w");
  require_int8_type(node, x, "x");
  require_int8_type(node, w, "w");
  const bool residual = inputs.size() > 12 && inputs[12].present;
  if (!(inputs.size() > 6 && inputs[6].present)) {  // float output: no y parameters, no residual
    if (inputs.size() > 7 && inputs[7].present) node_fail<InvalidModelError>(node, "y_zero_point given without y_scale");
    if (residual) node_fail<InvalidModelError>(node, "a residual join needs y_scale and y_zero_point (an 8-bit Y)");
    return {TensorInfo{std::move(out), DType::Float32}};
  }
  const TensorInfo& y_zp = require_input(node, inputs, 7, "y_zero_point");
  require_int8_type(node, y_zp, "y_zero_point");
  return {TensorInfo{std::move(out), y_zp.dtype}};
}

std::vector<TensorInfo> infer_conv(const Node& node, const std::vector<ValueInfo>& inputs) {
  const Shape& x = require_input(node, inputs, 0, "x").shape;
  const Shape& w = require_input(node, inputs, 3, "w").shape;
  return checked_output(node, inputs, int_conv_output(x, w, int_conv_geometry(node, x, w)));
}

std::vector<TensorInfo> infer_gemm(const Node& node, const std::vector<ValueInfo>& inputs) {
  const Shape& x = require_input(node, inputs, 0, "x").shape;
  const Shape& w = require_input(node, inputs, 3, "w").shape;
  const bool trans_b = node.attr_int("transB", 0) != 0;
  if (x.size() != 2 || w.size() != 2 || x[1] != (trans_b ? w[1] : w[0])) {
    node_fail<InvalidModelError>(node, "x " + shape_str(x) + " and w " + shape_str(w) + " do not multiply");
  }
  return checked_output(node, inputs, Shape{x[0], trans_b ? w[0] : w[1]});
}

std::vector<TensorInfo> infer_matmul(const Node& node, const std::vector<ValueInfo>& inputs) {
  const Shape& x = require_input(node, inputs, 0, "x").shape;
  const Shape& w = require_input(node, inputs, 3, "w").shape;
  if (x.size() < 2 || w.size() != 2 || x.back() != w[0]) {
    node_fail<InvalidModelError>(node, "x " + shape_str(x) + " and w " + shape_str(w) + " do not multiply");
  }
  Shape out = x;
  out.back() = w[1];
  return checked_output(node, inputs, out);
}

OpDef fused_def(decltype(OpDef::infer) infer, decltype(OpDef::validate) validate) {
  OpDef def;
  def.infer = std::move(infer);
  def.validate = std::move(validate);
  def.fused = true;
  def.min_opset = 1;
  return def;
}

}  // namespace

void register_qdq_int8_ops(OpRegistry& r) {
  r.add("Int8Conv", fused_def(infer_conv, [](const Node& node) {
          node.expect_only_attrs(
              {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides", "relu", "clip_min", "clip_max"});
          check_window_attrs(node, WindowOp::Conv);
        }));
  r.add("Int8Gemm", fused_def(infer_gemm, [](const Node& node) {
          node.expect_only_attrs({"transB", "relu", "clip_min", "clip_max"});
        }));
  r.add("Int8MatMul", fused_def(infer_matmul, [](const Node& node) {
          node.expect_only_attrs({"relu", "clip_min", "clip_max"});
        }));
}

}  // namespace dnnx
