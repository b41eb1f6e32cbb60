// Note [cpu dtypes] (element_type.h): a node whose float64, float16 or bfloat16 values meet a
// CPU kernel of float32 only runs that kernel on float32 copies: each such input is converted
// to float32 (float64 rounds to nearest), the kernel runs, and each such output is rounded back
// to its declared type. A float16 or bfloat16 op thus gives what onnxruntime's float32-computing
// half kernels give; a float64 one computes with float32's precision (plan() says so).
#pragma once
#include <vector>

#include "runtime/backend.h"

namespace dnnx {

// Whether `t` is a float type a float32 kernel can stand in for (float64, float16, bfloat16).
bool widenable(DType t);

// The choice of `factory` for the node with every widenable input and output of a type
// `native` does not hold taken as float32, wrapped to convert at its edges.
KernelChoice plan_widened(const KernelFactory& factory, const std::vector<DType>& native, const Node& node,
                          const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs);

}  // namespace dnnx
