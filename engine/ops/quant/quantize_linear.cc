// QuantizeLinear (10, 13, 19, 21, 23+) and DequantizeLinear (10, 13, 19, 21, 23+), as onnx 1.23
// defines them and onnxruntime runs them:
//   QuantizeLinear    y = saturate(round_half_even(x / scale) + zero_point)   integer y
//                     y = to_float8(x / scale, saturate)                       float8 / float4 y
//   DequantizeLinear  y = (x - zero_point) * scale
// x [..]; scale and zero point per tensor, per axis or blocked (Note [quantization granularity]
// in ops/quant/quant_layout.h). The arithmetic is float32's, as onnxruntime's (float16 and
// bfloat16 values are widened: Note [cpu dtypes]); the kernels are backends/cpu/quant/.
// The types by opset (onnx's type constraints):
//   quantized  10, 13: int8, uint8 (DequantizeLinear also int32); 19: + the four float8 types;
//              21: + int16, uint16, int4, uint4; 23: + float4e2m1 (uint2/int2, 25, are not engine dtypes)
//   float      10, 13: float32 (QuantizeLinear's x also int32); 19 on: float32, float16, bfloat16
#include "ops/quant/quantize_linear.h"

#include "ops/layout/cast.h"
#include "ops/quant/quant_layout.h"

namespace dnnx {

namespace {

// The quantized types `opset` allows (int32 is DequantizeLinear's alone: the caller adds it).
bool quantized_type_allowed(DType t, int opset) {
  switch (t) {
    case DType::Int8:
    case DType::UInt8: return true;
    case DType::Float8E4M3FN:
    case DType::Float8E4M3FNUZ:
    case DType::Float8E5M2:
    case DType::Float8E5M2FNUZ: return opset >= 19;
    case DType::Int16:
    case DType::UInt16:
    case DType::Int4:
    case DType::UInt4: return opset >= 21;
    case DType::Float4E2M1: return opset >= 23;
    default: return false;
  }
}

void require_scale_type(const Node& node, const TensorInfo& scale, DType x_type, bool quantize) {
  const bool floating = scale.dtype == DType::Float32 || (node.opset >= 19 && is_half(scale.dtype));
  if (!floating) {
    node_fail<UnsupportedModelError>(node, std::string("the scale is ") + dtype_name(scale.dtype) +
                                               (node.opset >= 19 ? ", expected float32, float16 or bfloat16"
                                                                 : ", expected float32 before opset 19"));
  }
  // Until opset 23 QuantizeLinear's x and scale share one type (T1).
  if (quantize && node.opset >= 19 && node.opset < 23 && x_type != DType::Int32 && scale.dtype != x_type) {
    node_fail<InvalidModelError>(node, std::string("x is ") + dtype_name(x_type) + " and the scale " +
                                           dtype_name(scale.dtype) + ": before opset 23 they share one type");
  }
}

const TensorInfo* zero_point_of(const std::vector<ValueInfo>& inputs) {
  return inputs.size() > 2 && inputs[2].present ? &inputs[2].info : nullptr;
}

void validate_quantize(const Node& node) {
  node.expect_only_attrs({"axis", "saturate", "block_size", "output_dtype", "precision"});
}

// x [..] float32/float16/bfloat16/int32, scale, zero point -> y [..] of the quantized type.
std::vector<TensorInfo> infer_quantize(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "x");
  const TensorInfo& scale = require_input(node, inputs, 1, "y_scale");
  if (!(x.dtype == DType::Float32 || x.dtype == DType::Int32 || (node.opset >= 19 && is_half(x.dtype)))) {
    node_fail<UnsupportedModelError>(node, std::string("x is ") + dtype_name(x.dtype) +
                                               ", expected float32, float16, bfloat16 or int32");
  }
  require_scale_type(node, scale, x.dtype, true);
  const TensorInfo* zp = zero_point_of(inputs);
  quant_layout(node, x.shape, scale.shape, zp ? &zp->shape : nullptr);
  return {TensorInfo{x.shape, quantize_output_type(node, inputs)}};
}

void validate_dequantize(const Node& node) { node.expect_only_attrs({"axis", "block_size", "output_dtype"}); }

// x [..] of a quantized type, scale, zero point (x's type) -> y [..] of the scale's type.
std::vector<TensorInfo> infer_dequantize(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "x");
  const TensorInfo& scale = require_input(node, inputs, 1, "x_scale");
  if (!(x.dtype == DType::Int32 || quantized_type_allowed(x.dtype, node.opset))) {
    node_fail<UnsupportedModelError>(node, std::string("x is ") + dtype_name(x.dtype) +
                                               ", which DequantizeLinear-" + std::to_string(node.opset) +
                                               " does not take");
  }
  require_scale_type(node, scale, x.dtype, false);
  const TensorInfo* zp = zero_point_of(inputs);
  if (zp && zp->dtype != x.dtype) {
    node_fail<InvalidModelError>(node, std::string("the zero point is ") + dtype_name(zp->dtype) + ", x " +
                                           dtype_name(x.dtype) + ": they share one type");
  }
  quant_layout(node, x.shape, scale.shape, zp ? &zp->shape : nullptr);
  DType out = scale.dtype;
  const int64_t code = node.attr_int("output_dtype", 0);
  if (code != 0) {
    if (node.opset < 23) node_fail<InvalidModelError>(node, "output_dtype needs opset 23 or later");
    DType wanted = DType::Float32;
    if (!dtype_from_onnx(code, wanted) || !(wanted == DType::Float32 || is_half(wanted))) {
      node_fail<UnsupportedModelError>(node, "output_dtype " + std::to_string(code) +
                                                 " is not float32, float16 or bfloat16");
    }
    if (wanted != scale.dtype) {
      node_fail<InvalidModelError>(node, std::string("output_dtype is ") + dtype_name(wanted) + " and the scale " +
                                             dtype_name(scale.dtype) + ": they must agree");
    }
    out = wanted;
  }
  return {TensorInfo{x.shape, out}};
}

}  // namespace

DType quantize_output_type(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo* zp = zero_point_of(inputs);
  const int64_t code = node.attr_int("output_dtype", 0);
  DType out = DType::UInt8;
  if (code != 0) {
    if (node.opset < 21) node_fail<InvalidModelError>(node, "output_dtype needs opset 21 or later");
    if (!dtype_from_onnx(code, out)) {
      node_fail<UnsupportedModelError>(node, "output_dtype " + std::to_string(code) + " is not an engine dtype");
    }
    if (zp && zp->dtype != out) {
      node_fail<InvalidModelError>(node, std::string("output_dtype is ") + dtype_name(out) + " and the zero point " +
                                             dtype_name(zp->dtype) + ": they must agree");
    }
  } else if (zp) {
    out = zp->dtype;
  }
  if (!quantized_type_allowed(out, node.opset)) {
    node_fail<UnsupportedModelError>(node, std::string("QuantizeLinear-") + std::to_string(node.opset) +
                                               " has no " + dtype_name(out) + " output");
  }
  return out;
}

bool quantize_saturates(const Node& node) { return node.attr_int("saturate", 1) != 0; }

void register_quantize_linear_ops(OpRegistry& r) {
  OpDef q;
  q.validate = validate_quantize;
  q.infer = infer_quantize;
  q.min_opset = 10;
  r.add("QuantizeLinear", std::move(q));

  OpDef dq;
  dq.validate = validate_dequantize;
  dq.infer = infer_dequantize;
  dq.min_opset = 10;
  r.add("DequantizeLinear", std::move(dq));
}

}  // namespace dnnx
