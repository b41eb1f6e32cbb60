// One element of a fused conv activation (Note [conv activations on cuda], conv_activation.h), in
// float: the in-place pass after a conv (conv_activation_kernels.cu) and the direct depthwise
// kernel's epilogue (depthwise_conv_kernels.cu) compute the same formulas. HardSwish is the
// unfused op's (ops/elementwise/unary_math.h), Swish the unfused pair's x * (1 / (1 + e^-x)),
// Clip onnxruntime's min(max(x, lo), hi) (NaN passes through).
#pragma once
#include "ops/conv/conv_activation.h"
#include "ops/elementwise/unary_math.h"

namespace dnnx::cuda {

template <ConvActivationKind K>
__device__ __forceinline__ float conv_activation_value(float v, float lo, float hi) {
  if constexpr (K == ConvActivationKind::Swish) {
    return v * (1.0f / (1.0f + expf(-v)));
  } else if constexpr (K == ConvActivationKind::HardSwish) {
    return unary_value<UnaryMath::HardSwish>(v, UnaryParams{});
  } else if constexpr (K == ConvActivationKind::Clip) {
    const float out = v < lo ? lo : v;
    return out > hi ? hi : out;
  } else {
    return v;
  }
}

// The same, the kind chosen at run time (one branch, the same for every thread).
__device__ __forceinline__ float conv_activation_value(const ConvActivation& act, float v) {
  switch (act.kind) {
    case ConvActivationKind::Swish: return conv_activation_value<ConvActivationKind::Swish>(v, act.lo, act.hi);
    case ConvActivationKind::HardSwish: return conv_activation_value<ConvActivationKind::HardSwish>(v, act.lo, act.hi);
    case ConvActivationKind::Clip: return conv_activation_value<ConvActivationKind::Clip>(v, act.lo, act.hi);
    case ConvActivationKind::None: break;
  }
  return v;
}

}  // namespace dnnx::cuda
