// The integer matrix products' shared meaning: MatMulInteger, QLinearMatMul (ai.onnx) and the
// com.microsoft ops built on them (QGemm, MatMulIntegerToFloat, DynamicQuantizeMatMul).
//
// Note [integer matmul parameters]: a product of A [..., M, K] and B [..., K, N] (numpy.matmul's
// shapes, ops/dense/matmul.h) subtracts zero points before it multiplies, and a requantizing op
// scales after it. Where each parameter may vary (onnx's spec, and onnxruntime's
// IsBQuantParamSupported for B):
//   A's (a_zero_point, a_scale)  one value; or per row, [M] (MatMulInteger's zero point only)
//   B's (b_zero_point, b_scale)  one value; per column, [N]; or per batch and column,
//                                [batch..., 1, N] of B's rank
// The accumulation is int32 (uint8/int8 minus a zero point fits int16; the sum of K products
// wraps past 2^31 as onnxruntime's does, at K beyond ~33000 for the worst values).
#pragma once
#include "ops/dense/matmul.h"
#include "ops/op.h"

namespace dnnx {

enum class ParamSpread { PerTensor, PerRow, PerColumn, PerBatchColumn };

// A's parameter `param` (named `what` in messages); per_row_allowed: MatMulInteger's zero point.
ParamSpread a_param_spread(const Node& node, const MatMulGeometry& g, const Shape& param, const char* what,
                           bool per_row_allowed);
// B's parameter `param` for B of shape `b`.
ParamSpread b_param_spread(const Node& node, const MatMulGeometry& g, const Shape& b, const Shape& param,
                           const char* what);
// A one-value parameter (a scale or zero point of A or of the output): a scalar or [1].
void require_one_value(const Node& node, const Shape& param, const char* what);
// Whether `t` is an 8-bit integer (the integer products' operand types).
inline bool is_int8_type(DType t) { return t == DType::Int8 || t == DType::UInt8; }
// UnsupportedModelError naming the input unless it is int8 or uint8.
void require_int8_type(const Node& node, const TensorInfo& info, const char* what);

}  // namespace dnnx
