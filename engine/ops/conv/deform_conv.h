// DeformConv (opset 19; 22 the same meaning), 2-D: a conv whose taps read X at offset positions.
//   X [N, C, H, W], W [M, C/group, kH, kW], offset [N, offset_group*2*kH*kW, oH, oW] (per tap
//   (dh, dw) pairs), B [M] (optional), mask [N, offset_group*kH*kW, oH, oW] (optional, default 1)
//   -> Y [N, M, oH, oW], oH = (H + pads - ((kH - 1) * dilation + 1)) / stride + 1 (and oW).
// Tap (kh, kw) of output (i, j) for a channel of offset group g reads X bilinearly at
// (i*stride - pad + kh*dilation + dh, j*stride - pad + kw*dilation + dw), reading 0 outside X,
// and is weighted by its mask value (onnx's reference: GridSample, linear, align_corners=1, zeros).
#pragma once
#include "ops/op.h"

namespace dnnx {

struct DeformConvGeometry {
  int64_t batch = 0, channels = 0, filters = 0, group = 1, offset_group = 1;
  int64_t in_h = 0, in_w = 0, k_h = 0, k_w = 0, out_h = 0, out_w = 0;
  int64_t stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, pad_top = 0, pad_left = 0;
  bool has_bias = false, has_mask = false;
};

DeformConvGeometry deform_conv_geometry(const Node& node, const std::vector<ValueInfo>& inputs);

}  // namespace dnnx
