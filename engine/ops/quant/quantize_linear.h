// QuantizeLinear and DequantizeLinear: their types, shared by the op file and every backend.
#pragma once
#include "ops/op.h"

namespace dnnx {

// QuantizeLinear's output type: the zero point's type where given, else output_dtype (opset 21
// on), else uint8; UnsupportedModelError naming the node for a type its opset does not allow.
DType quantize_output_type(const Node& node, const std::vector<ValueInfo>& inputs);
// QuantizeLinear's `saturate` (opset 19, default 1): float8 targets clip to their largest finite value.
bool quantize_saturates(const Node& node);
// Whether `t` is one of the float8 types or float4e2m1: quantized by rounding, without a zero point's offset.
inline bool is_minifloat(DType t) { return t >= DType::Float8E4M3FN && t != DType::Int4 && t != DType::UInt4; }

}  // namespace dnnx
