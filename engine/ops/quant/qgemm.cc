// com.microsoft's QGemm (1): A, a_scale, a_zero_point, B, b_scale, b_zero_point, C?, y_scale?,
// y_zero_point? -> Y [M, N], with Gemm's transA, transB and alpha:
//   sum = (A - a_zp) x (B - b_zp) + C     int32; C the bias, broadcast over [M, N]
//   Y   = saturate(round(sum * (alpha * a_scale * b_scale / y_scale)) + y_zp)   with y_scale
//   Y   = sum * (alpha * a_scale * b_scale)                                     float32 without
// b_scale and b_zero_point one value or per column [N] (onnxruntime's CheckInputs); the
// multiplier in that order, float32, as onnxruntime's ComputeOutputScale (Note [requantization]).
// The kernel is backends/cpu/quant/qgemm_cpu.cc.
#include "ops/quant/qgemm.h"

#include "ops/quant/int_matmul.h"

namespace dnnx {

QGemmGeometry qgemm_geometry(const Node& node, const Shape& a, const Shape& b, const Shape* c) {
  if (a.size() != 2 || b.size() != 2) {
    node_fail<InvalidModelError>(node, "A " + shape_str(a) + " and B " + shape_str(b) + " must be 2-D");
  }
  QGemmGeometry g;
  g.trans_a = node.attr_int("transA", 0) != 0;
  g.trans_b = node.attr_int("transB", 0) != 0;
  g.alpha = node.attr_float("alpha", 1.0f);
  g.m = g.trans_a ? a[1] : a[0];
  g.k = g.trans_a ? a[0] : a[1];
  g.n = g.trans_b ? b[0] : b[1];
  const int64_t kb = g.trans_b ? b[1] : b[0];
  if (kb != g.k) {
    node_fail<InvalidModelError>(node, "A " + shape_str(a) + " and B " + shape_str(b) + " (transA " +
                                           std::to_string(g.trans_a) + ", transB " + std::to_string(g.trans_b) +
                                           ") do not agree on K");
  }
  if (c) {
    const Shape& s = *c;
    const int64_t count = numel(s);
    if (count == 1 && s.size() <= 2) {
      // one value: both strides 0
    } else if ((s.size() == 1 && s[0] == g.n) || (s.size() == 2 && s[0] == 1 && s[1] == g.n)) {
      g.c_col = 1;
    } else if (s.size() == 2 && s[0] == g.m && s[1] == 1) {
      g.c_row = 1;
    } else if (s.size() == 2 && s[0] == g.m && s[1] == g.n) {
      g.c_row = g.n;
      g.c_col = 1;
    } else {
      node_fail<InvalidModelError>(node, "C " + shape_str(s) + " does not broadcast to Y [" + std::to_string(g.m) +
                                             "," + std::to_string(g.n) + "]");
    }
  }
  return g;
}

namespace {

bool present(const std::vector<ValueInfo>& inputs, size_t i) { return i < inputs.size() && inputs[i].present; }

std::vector<TensorInfo> infer_qgemm(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& a = require_input(node, inputs, 0, "A");
  const TensorInfo& a_scale = require_input(node, inputs, 1, "a_scale");
  const TensorInfo& a_zp = require_input(node, inputs, 2, "a_zero_point");
  const TensorInfo& b = require_input(node, inputs, 3, "B");
  const TensorInfo& b_scale = require_input(node, inputs, 4, "b_scale");
  const TensorInfo& b_zp = require_input(node, inputs, 5, "b_zero_point");
  require_int8_type(node, a, "A");
  require_int8_type(node, b, "B");
  if (a_zp.dtype != a.dtype || b_zp.dtype != b.dtype) {
    node_fail<InvalidModelError>(node, "a_zero_point and b_zero_point must have A's and B's types");
  }
  if (a_scale.dtype != DType::Float32 || b_scale.dtype != DType::Float32) {
    node_fail<UnsupportedModelError>(node, "a_scale and b_scale must be float32");
  }
  const Shape* c = present(inputs, 6) ? &inputs[6].info.shape : nullptr;
  if (c && inputs[6].info.dtype != DType::Int32) {
    node_fail<InvalidModelError>(node, std::string("C is ") + dtype_name(inputs[6].info.dtype) + ", expected int32");
  }
  const QGemmGeometry g = qgemm_geometry(node, a.shape, b.shape, c);
  require_one_value(node, a_scale.shape, "a_scale");
  require_one_value(node, a_zp.shape, "a_zero_point");
  for (const TensorInfo* p : {&b_scale, &b_zp}) {
    const bool ok = p->shape.empty() || (p->shape.size() == 1 && (p->shape[0] == 1 || p->shape[0] == g.n));
    if (!ok) {
      node_fail<InvalidModelError>(node, "b_scale and b_zero_point must be a scalar, [1] or [N] = [" +
                                             std::to_string(g.n) + "], got " + shape_str(p->shape));
    }
  }
  const bool y_scale = present(inputs, 7), y_zp = present(inputs, 8);
  if (y_scale != y_zp) node_fail<InvalidModelError>(node, "y_scale and y_zero_point come together or not at all");
  if (!y_scale) return {TensorInfo{{g.m, g.n}, DType::Float32}};
  if (inputs[7].info.dtype != DType::Float32) node_fail<UnsupportedModelError>(node, "y_scale must be float32");
  require_one_value(node, inputs[7].info.shape, "y_scale");
  require_one_value(node, inputs[8].info.shape, "y_zero_point");
  require_int8_type(node, inputs[8].info, "y_zero_point");
  return {TensorInfo{{g.m, g.n}, inputs[8].info.dtype}};
}

}  // namespace

void register_qgemm_ops(OpRegistry& r) {
  OpDef def;
  def.validate = [](const Node& node) { node.expect_only_attrs({"alpha", "transA", "transB"}); };
  def.infer = infer_qgemm;
  def.min_opset = 1;
  r.add(op_key(kMicrosoftDomain, "QGemm"), std::move(def));
}

}  // namespace dnnx
