// com.microsoft's QLinearSigmoid and QLinearLeakyRelu (1):
//   X, X_scale, X_zero_point?, Y_scale, Y_zero_point? -> Y, X and Y int8 or uint8 alike
// y = QuantizeLinear(f(DequantizeLinear(x)), Y_scale, Y_zp) with f sigmoid or leaky relu
// (attribute alpha, default 0.01), computed once per plan for the 256 values x can hold, as
// onnxruntime's lookup table (the kernel is backends/cpu/quant/qlinear_lookup_cpu.cc).
#include "ops/quant/qlinear_lookup.h"

#include "ops/quant/int_matmul.h"

namespace dnnx {

namespace {

void require_scale(const Node& node, const std::vector<ValueInfo>& inputs, size_t i, const TensorInfo& x,
                   const char* name) {
  const TensorInfo& s = require_input(node, inputs, i, name);
  if (s.dtype != DType::Float32) {
    node_fail<UnsupportedModelError>(node, std::string(name) + " is " + dtype_name(s.dtype) + ", expected float32");
  }
  require_one_value(node, s.shape, name);
  if (i + 1 < inputs.size() && inputs[i + 1].present) {
    const TensorInfo& zp = inputs[i + 1].info;
    if (zp.dtype != x.dtype) {
      node_fail<InvalidModelError>(node, std::string("the zero point after ") + name + " is " + dtype_name(zp.dtype) +
                                             ", X " + dtype_name(x.dtype));
    }
    require_one_value(node, zp.shape, "a zero point");
  }
}

std::vector<TensorInfo> infer_lookup(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  require_int8_type(node, x, "X");
  require_scale(node, inputs, 1, x, "X_scale");
  require_scale(node, inputs, 3, x, "Y_scale");
  return {TensorInfo{x.shape, x.dtype}};
}

}  // namespace

LookupFunction lookup_function(const Node& node) {
  return node.op_type == "QLinearSigmoid" ? LookupFunction::Sigmoid : LookupFunction::LeakyRelu;
}

void register_qlinear_lookup_ops(OpRegistry& r) {
  OpDef sigmoid;
  sigmoid.validate = [](const Node& node) { node.expect_only_attrs({}); };
  sigmoid.infer = infer_lookup;
  sigmoid.min_opset = 1;
  r.add(op_key(kMicrosoftDomain, "QLinearSigmoid"), std::move(sigmoid));

  OpDef leaky;
  leaky.validate = [](const Node& node) { node.expect_only_attrs({"alpha"}); };
  leaky.infer = infer_lookup;
  leaky.min_opset = 1;
  r.add(op_key(kMicrosoftDomain, "QLinearLeakyRelu"), std::move(leaky));
}

}  // namespace dnnx
