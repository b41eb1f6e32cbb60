// Note [conv activations on cuda]: "Conv+Swish" (SiLU: x * sigmoid(x)), "Conv+HardSwish" and
// "Conv+Clip" (ReLU6 and the like; attributes clip_min, clip_max), made by the
// fuse_conv_activation pass, and their "@NHWC" forms: the conv as "Conv" plans it (cuDNN's
// choice, the direct depthwise kernel, the 1x1 GEMM), then one in-place pass of the activation
// over its output. Unfused, SiLU was a Sigmoid and a Mul: two passes and a second buffer
// (EfficientNet-B0 at fp32, batch 64, an H100: 1.49 + 1.94 ms of 11.3; session 15's profile),
// and Clip and HardSwish one pass each into a second buffer. Float32, float16 and bfloat16: the
// activation computed in float and stored once (unfused half storage rounded the Sigmoid's output
// as well). Written in session 15 behind a switch, when no GPU run was had to test it; on by
// default since session 16's run on an H100 (tests/cuda/test_cuda_conv_activation.py passed;
// batch 64, unfused -> fused ms, bench/probes/probe_conv_activation_cuda.py: EfficientNet-B0 fp32
// 10.71 -> 9.11, tf32 7.36 -> 5.83, fp16 5.51 -> 4.44; RexNet 10.08 -> 8.86, 8.16 -> 7.04, 6.86 ->
// 6.01; MobileViT-xxs 8.71 -> 7.84, 6.84 -> 6.05, 5.33 -> 4.71; MobileNetV2 and V3 within 3%).
// DNNX_PROBE_CUDA_CONV_ACTIVATION=0 (TestHooks::conv_activation) keeps them apart.
#pragma once
#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "ir/tensor.h"
#include "ops/conv/conv_activation.h"
#include "runtime/backend.h"

namespace dnnx::cuda {

struct CudaContext;

// y[i] = act(y[i]) for i < n, elements of `dtype` (float32, float16 or bfloat16); None: nothing.
void launch_conv_activation(const ConvActivation& act, void* y, int64_t n, DType dtype, cudaStream_t stream);

// The factory of a Conv+<activation> op: `conv` (the plain Conv's factory, in the same layout)
// plans the conv; its kernel is then followed by launch_conv_activation over output 0, unless
// the chosen candidate is `applied_by` (a kernel that applies the node's activation itself: the
// direct depthwise conv, Note [depthwise activations]).
KernelFactory conv_activation_factory(const CudaContext& ctx, KernelFactory conv, std::string applied_by);

// The activation's name in the plan ("swish", "hardswish", "clip"; "" for None).
const char* conv_activation_name(ConvActivationKind kind);

}  // namespace dnnx::cuda
