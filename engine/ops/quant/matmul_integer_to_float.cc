// com.microsoft's integer products with a float32 output (1), as onnxruntime's quantize_dynamic
// writes them:
//   MatMulIntegerToFloat   A, B int8/uint8, a_scale, b_scale, a_zero_point?, b_zero_point?, bias?
//                          -> Y = (A - a_zp) x (B - b_zp) * (a_scale * b_scale) + bias
//   DynamicQuantizeMatMul  A float32, B, b_scale, b_zero_point?, bias?
//                          -> A quantized to uint8 first, as DynamicQuantizeLinear does (its scale
//                             and zero point over the whole of A), then as above
// numpy.matmul's shapes; A's parameters one value, B's one value, per column [N] or per batch and
// column (Note [integer matmul parameters]); bias float32 [N]. The kernels are
// backends/cpu/quant/matmul_integer_cpu.cc.
#include "ops/quant/int_matmul.h"

namespace dnnx {

namespace {

bool present(const std::vector<ValueInfo>& inputs, size_t i) { return i < inputs.size() && inputs[i].present; }

void require_float32(const Node& node, const TensorInfo& t, const char* what) {
  if (t.dtype != DType::Float32) {
    node_fail<UnsupportedModelError>(node, std::string(what) + " is " + dtype_name(t.dtype) + ", expected float32");
  }
}

// The checks both ops share: B's parameters at (b_scale, b_zp), the bias at `bias`.
void check_b_side(const Node& node, const std::vector<ValueInfo>& inputs, const MatMulGeometry& g, size_t b_scale,
                  size_t b_zp, size_t bias) {
  const TensorInfo& b = inputs[1].info;
  const TensorInfo& scale = require_input(node, inputs, b_scale, "b_scale");
  require_float32(node, scale, "b_scale");
  b_param_spread(node, g, b.shape, scale.shape, "b_scale");
  if (present(inputs, b_zp)) {
    if (inputs[b_zp].info.dtype != b.dtype) node_fail<InvalidModelError>(node, "b_zero_point must have B's type");
    b_param_spread(node, g, b.shape, inputs[b_zp].info.shape, "b_zero_point");
  }
  if (present(inputs, bias)) {
    require_float32(node, inputs[bias].info, "bias");
    if (inputs[bias].info.shape != Shape{g.n}) {
      node_fail<InvalidModelError>(node, "bias must be [N] = [" + std::to_string(g.n) + "], got " +
                                             shape_str(inputs[bias].info.shape));
    }
  }
}

std::vector<TensorInfo> infer_to_float(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& a = require_input(node, inputs, 0, "A");
  const TensorInfo& b = require_input(node, inputs, 1, "B");
  require_int8_type(node, a, "A");
  require_int8_type(node, b, "B");
  const MatMulGeometry g = matmul_geometry(node, a.shape, b.shape);
  const TensorInfo& a_scale = require_input(node, inputs, 2, "a_scale");
  require_float32(node, a_scale, "a_scale");
  require_one_value(node, a_scale.shape, "a_scale");
  if (present(inputs, 4)) {
    if (inputs[4].info.dtype != a.dtype) node_fail<InvalidModelError>(node, "a_zero_point must have A's type");
    require_one_value(node, inputs[4].info.shape, "a_zero_point");
  }
  check_b_side(node, inputs, g, 3, 5, 6);
  return {TensorInfo{g.out, DType::Float32}};
}

std::vector<TensorInfo> infer_dynamic(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& a = require_input(node, inputs, 0, "A");
  const TensorInfo& b = require_input(node, inputs, 1, "B");
  require_float32(node, a, "A");
  require_int8_type(node, b, "B");
  const MatMulGeometry g = matmul_geometry(node, a.shape, b.shape);
  check_b_side(node, inputs, g, 2, 3, 4);
  return {TensorInfo{g.out, DType::Float32}};
}

}  // namespace

void register_matmul_integer_to_float_ops(OpRegistry& r) {
  OpDef to_float;
  to_float.validate = [](const Node& node) { node.expect_only_attrs({}); };
  to_float.infer = infer_to_float;
  to_float.min_opset = 1;
  r.add(op_key(kMicrosoftDomain, "MatMulIntegerToFloat"), std::move(to_float));

  OpDef dynamic;
  dynamic.validate = [](const Node& node) { node.expect_only_attrs({}); };
  dynamic.infer = infer_dynamic;
  dynamic.min_opset = 1;
  r.add(op_key(kMicrosoftDomain, "DynamicQuantizeMatMul"), std::move(dynamic));
}

}  // namespace dnnx
