// The activations the CPU conv kernels apply after their epilogue (conv_epilogue_cpu.h), on each
// output row or tile while it is still in cache: "Conv+Clip" (ReLU6 and any constant clip),
// "Conv+HardSwish" and "Conv+Swish" (SiLU, x * sigmoid(x)), made by the fuse_conv_activation pass
// (runtime/passes/fuse_conv_activation.cc). Each is the unfused op's formula (Clip's min-then-max
// order, ops/elementwise/unary_math.h's HardSwish, the Sigmoid kernel's sigmoidf), so the fused
// layer gives the unfused graph's results.
#pragma once
#include <cstdint>

#include "ops/conv/conv_activation.h"

namespace dnnx {

// y[0, n) = act(y[0, n)), vectorized (8 lanes where the CPU has AVX2).
void apply_conv_activation(const ConvActivation& act, float* y, int64_t n);

}  // namespace dnnx
