// Resize (opsets 10-19) and Upsample (7, 9): what a node means, read once for the op file and
// every backend. X [d...] float32 -> Y [out...], each output dim from its scale or size.
// Per dim, each output index reads a few input indices with weights (its "taps"): nearest one,
// linear two, cubic four, antialias (opset 18) as many as the widened filter covers. Y is the
// separable product: y[o] = sum over tap combinations of prod_d w_d * x[i_d...]. The CPU kernel
// and both gradients read the tap tables built here; the CUDA kernel computes the same taps on
// the device from ops/resample/resize_coords.h.
#pragma once
#include <vector>

#include "ops/op.h"
#include "ops/resample/resize_coords.h"

namespace dnnx {

struct ResizeParams {
  ResizeMode mode = ResizeMode::Nearest;
  ResizeCoord coord = ResizeCoord::HalfPixel;
  ResizeNearest nearest = ResizeNearest::RoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  float extrapolation = 0.0f;
  std::vector<ResizeDim> dims;  // one per dim of X
  Shape out;
};

// The node's attributes and its roi / scales / sizes inputs (constants at plan time: value
// inputs) for X of shape `x`; throws naming the node for what cannot be.
ResizeParams resize_params(const Node& node, const std::vector<ValueInfo>& inputs, const Shape& x);

// One dim's taps: output index o reads index[o * taps + k] with weight[o * taps + k]; outside[o]
// marks a tf_crop_and_resize position that takes the extrapolation value instead.
struct ResizeTaps {
  int64_t taps = 1;
  std::vector<int64_t> index;
  std::vector<float> weight;
  std::vector<uint8_t> outside;
};
std::vector<ResizeTaps> resize_taps(const ResizeParams& p);

}  // namespace dnnx
