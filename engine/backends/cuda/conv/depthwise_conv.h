// A direct depthwise convolution (conv_cuda.cc offers it to the planner beside cuDNN's algorithms,
// Note [direct depthwise conv]): group = C = M (one filter per channel), 2-D (1-D as 2-D with a
// unit height), any window, stride, dilation and pads, in ONNX's layout (x [N, C, H, W]) or
// channels-last (x [N, H, W, C]); w [C, 1, KH, KW] (the same bytes as channels-last's KRSC
// [C, KH, KW, 1]), b [C], optional residual z shaped like y; float32, float16 or bfloat16
// storage, each output summed in float32 (FMAs, taps in order, then the bias, the residual and
// the Relu or a fused conv activation) and rounded once to the storage type.
//
// Note [direct depthwise conv]: cuDNN runs a depthwise conv as a grouped GEMM (IMPLICIT_GEMM and
// its PRECOMP form, one GEMM of K = KH*KW per group): in the session-5 sweep (H100, batch 64)
// ConvNeXt-T's 7x7 depthwise convs took 0.89 ms each in fp32 and the half plans of MobileNetV2,
// EfficientNet-B0 and ConvNeXt were kept in fp32 by the measured precision choice, their half
// depthwise convs slower still. A depthwise conv reads each input value KH*KW times and does
// 2*KH*KW flops per output: it is bound by memory, not arithmetic. So the kernel reads each
// input through L1 (neighbouring threads share windows), keeps the weights in shared memory
// (channels-last: [taps, channel tile], each thread's channels adjacent for vector reads) and
// loads 16 bytes of channels per tap where C allows (8 half values or 4 floats).
//
// Note [depthwise activations]: EfficientNet-B0's depthwise convs are Conv+Swish, MobileNetV3's
// Conv+HardSwish; Note [conv activations on cuda] ran the activation as a second pass over the
// output, which at batch 64 is as large as the conv's own traffic (EfficientNet-B0's 16 depthwise
// layers took 3.17 ms at fp32 on an H100 with the pass, bench/RESULTS_CUDA.md session 19). The
// kernel applies it in its epilogue instead, in float before the one rounding (the pass rounded
// the conv's output to the storage type first, then the activation's).
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

#include "ir/tensor.h"
#include "ops/conv/conv_activation.h"

namespace dnnx::cuda {

struct DepthwiseConv2d {
  int64_t n = 0;                 // images (0: the shape is not taken)
  int c = 0;                     // channels = filters = groups
  int h = 0, w = 0, oh = 0, ow = 0;
  int kh = 0, kw = 0, sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;  // pads before (after: implied)
  bool channels_last = false;
  DType dtype = DType::Float32;  // of x, w, b, z and y
};

// Whether the kernel takes this shape (the weights of a channel tile fit in shared memory).
bool depthwise_conv_supported(const DepthwiseConv2d& c);

// What follows the sums: Relu, or a Conv+Swish / HardSwish / Clip node's activation, applied in
// float before the one rounding (Note [depthwise activations]).
struct DepthwiseEpilogue {
  bool relu = false;
  ConvActivation act;
};

// y = epilogue(conv(x, w) + b + z); b and z may be null.
void launch_depthwise_conv(const void* x, const void* w, const void* b, const void* z, void* y,
                           const DepthwiseConv2d& c, const DepthwiseEpilogue& epilogue, cudaStream_t stream);

}  // namespace dnnx::cuda
