// com.microsoft's QLinearAdd and QLinearMul (1), as onnxruntime's quantization tool writes them:
//   A, A_scale, A_zero_point?, B, B_scale, B_zero_point?, C_scale, C_zero_point? -> C
// A, B and C int8 or uint8 alike, numpy broadcasting, every scale and zero point one value
// (an omitted zero point is 0). As onnxruntime's MLAS computes them, in float32:
//   QLinearAdd  C = saturate(round((A_scale * (A - A_zp) + B_scale * (B - B_zp)) / C_scale) + C_zp)
//   QLinearMul  C = saturate(round((A - A_zp) * (B - B_zp) * (A_scale * B_scale / C_scale)) + C_zp)
// The kernel is backends/cpu/quant/qlinear_binary_cpu.cc.
#include "ops/quant/int_matmul.h"

namespace dnnx {

namespace {

void require_params(const Node& node, const std::vector<ValueInfo>& inputs, size_t scale, const TensorInfo& operand,
                    const char* name) {
  const TensorInfo& s = require_input(node, inputs, scale, name);
  if (s.dtype != DType::Float32) {
    node_fail<UnsupportedModelError>(node, std::string(name) + " is " + dtype_name(s.dtype) + ", expected float32");
  }
  require_one_value(node, s.shape, name);
  if (scale + 1 < inputs.size() && inputs[scale + 1].present) {
    const TensorInfo& zp = inputs[scale + 1].info;
    if (zp.dtype != operand.dtype) {
      node_fail<InvalidModelError>(node, std::string("the zero point after ") + name + " is " + dtype_name(zp.dtype) +
                                             ", expected " + dtype_name(operand.dtype));
    }
    require_one_value(node, zp.shape, "a zero point");
  }
}

std::vector<TensorInfo> infer_qlinear_binary(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& a = require_input(node, inputs, 0, "A");
  const TensorInfo& b = require_input(node, inputs, 3, "B");
  require_int8_type(node, a, "A");
  if (b.dtype != a.dtype) {
    node_fail<InvalidModelError>(node, std::string("A is ") + dtype_name(a.dtype) + " and B " + dtype_name(b.dtype) +
                                           ": they share one type");
  }
  require_params(node, inputs, 1, a, "A_scale");
  require_params(node, inputs, 4, a, "B_scale");
  require_params(node, inputs, 6, a, "C_scale");
  return {TensorInfo{broadcast_shapes(node, a.shape, b.shape), a.dtype}};
}

}  // namespace

void register_qlinear_binary_ops(OpRegistry& r) {
  for (const char* op : {"QLinearAdd", "QLinearMul"}) {
    OpDef def;
    def.validate = [](const Node& node) { node.expect_only_attrs({}); };
    def.infer = infer_qlinear_binary;
    def.min_opset = 1;
    r.add(op_key(kMicrosoftDomain, op), std::move(def));
  }
}

}  // namespace dnnx
