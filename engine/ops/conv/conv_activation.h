// The activation of a fused conv node ("Conv+Clip", "Conv+HardSwish", "Conv+Swish" and their
// "@NHWC" forms), made by the fuse_conv_activation pass (runtime/passes/fuse_conv_activation.cc):
// what each backend's kernels apply after the conv (backends/cpu/conv/conv_activation_cpu.h,
// backends/cuda/conv/conv_activation.h).
#pragma once

namespace dnnx {

struct Node;

enum class ConvActivationKind { None, Clip, HardSwish, Swish };

struct ConvActivation {
  ConvActivationKind kind = ConvActivationKind::None;
  float lo = 0.0f, hi = 0.0f;  // Clip's bounds
};

// The activation of a fused conv node by its op type ("Conv+Clip": clip_min / clip_max
// attributes); None for "Conv", "Conv+Relu", "Conv+Add+Relu".
ConvActivation conv_activation_of(const Node& node);

}  // namespace dnnx
