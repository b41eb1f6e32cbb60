// How one ONNX Conv maps onto cuDNN's descriptors, shared by the forward kernel (conv_cuda.cc)
// and its gradient (conv_grad_cuda.cc): the geometry expanded to at least two spatial dims (1-D
// convs run as 2-D with a unit height), cuDNN's symmetric pads, and the explicit zero padding
// of X for the excess where ONNX's pads differ between the two ends.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/search/conv_algo.h"
#include "ops/conv/conv_geometry.h"

namespace dnnx::cuda {

constexpr size_t kConvWorkspaceAlignment = 256;
inline size_t align_conv_workspace(size_t n) {
  return (n + kConvWorkspaceAlignment - 1) / kConvWorkspaceAlignment * kConvWorkspaceAlignment;
}

// The explicit padding of X for an asymmetric conv: X [N, C, in...] -> [N, C, padded...].
struct ExplicitPad {
  bool needed = false;
  int64_t planes = 0;                                                   // N * C
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, begin[3] = {0, 0, 0};  // D, H, W (unit dims first)
  size_t bytes = 0;                                                     // of the padded X, aligned
  DType dtype = DType::Float32;                                         // of X: float32 or a half type
};

struct ConvLayout {
  ConvGeometry onnx;  // as ONNX means it
  ConvGeometry g;     // expanded to at least 2 spatial dims
  ExplicitPad pad;
  std::vector<int> symmetric_pads;  // what cuDNN pads, per spatial dim
  Shape x_dims, w_dims, y_dims;     // as cuDNN sees them (x padded when pad.needed)
  DType dtype = DType::Float32;     // of X, W, B and Y (float16 with precision="fp16", bfloat16 with "bf16")
  bool channels_last = false;       // X, W, Y (and z) stored NHWC / KRSC (Note [channels last]); dims above stay NCHW
};

// The layout of Conv `node` for X of shape xs and W of shape ws (ONNX's NCHW / KCRS dims),
// elements of `dtype`; `channels_last`: stored NHWC / KRSC (symmetric pads only).
ConvLayout plan_conv_layout(const Node& node, const Shape& xs, const Shape& ws, DType dtype = DType::Float32,
                            bool channels_last = false);
// The same for a convolution whose ONNX geometry `onnx` is already known (ConvTranspose's
// adjoint Conv, ops/conv/conv_transpose.h: xs is then its Y, the adjoint's input).
ConvLayout plan_conv_layout(const Node& node, const ConvGeometry& onnx, const Shape& xs, const Shape& ws,
                            DType dtype = DType::Float32, bool channels_last = false);

// Where a result computed for the padded input lies in the unpadded one: crop the padded
// [planes, out...] buffer from `offset` through `dims` (launch_gather) into [planes, in...].
struct PadCrop {
  BroadcastDims dims;
  int64_t offset = 0;
  int64_t count = 0;
};
PadCrop pad_crop(const ExplicitPad& pad);

// Fills d's tensors, filter and convolution (with the math type of the conv's own precision,
// conv_math_type of conv_precision: float32 data in a half model ask for FMA) and
// checks that cuDNN computes ONNX's output dims (DeviceError otherwise).
void set_conv_descriptors(const CudaContext& ctx, const ConvLayout& layout, ConvDescriptors& d);

}  // namespace dnnx::cuda
