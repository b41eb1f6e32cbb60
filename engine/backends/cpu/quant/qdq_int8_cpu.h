// The int8 layers' CPU kernel (qdq_int8_cpu.cc) for other ops of the same arithmetic.
#pragma once
#include <optional>
#include <vector>

#include "runtime/kernel_registry.h"

namespace dnnx {

// QLinearConv (QOperator files: onnxruntime's quantize_static with QuantFormat.QOperator) run by
// Int8Conv's kernel: the int8 GEMM of Note [int8 gemm paths], the tiled im2col, the direct
// depthwise form (Note [int8 depthwise]), the requantization of Note [requantization]. nullopt
// where that kernel cannot take it (W or its zero point not a constant): the caller keeps its own.
std::optional<KernelChoice> plan_qlinear_conv_int8(const Node& node, const std::vector<ValueInfo>& inputs,
                                                   const std::vector<TensorInfo>& outputs);

// com.microsoft's QGemm by Int8Gemm's kernel (its inputs mapped to Int8Gemm's slots), where B and
// its zero point are constants, alpha is 1, transA 0 and C one value per output column; nullopt
// otherwise (qgemm_cpu.cc keeps its own).
std::optional<KernelChoice> plan_qgemm_int8(const Node& node, const std::vector<ValueInfo>& inputs,
                                            const std::vector<TensorInfo>& outputs);

}  // namespace dnnx
