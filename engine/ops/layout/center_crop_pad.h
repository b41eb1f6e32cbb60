// CenterCropPad's geometry, shared by the op file and every backend.
#pragma once
#include "ops/op.h"

namespace dnnx {

// Per dim of x: the output size and the centred window copied, x[in_start, in_start + count)
// -> y[out_start, out_start + count); the rest of y is zero. A crop by d starts at floor(d / 2)
// in x, a pad by d at floor(d / 2) in y (onnx's reference and onnxruntime alike).
struct CropPadDim {
  int64_t out = 0, in_start = 0, out_start = 0, count = 0;
};

// shape (a value input, one size per axis) and axes (attribute, default: every dim; negative
// counts from the end, no repeats) -> one entry per dim of x.
std::vector<CropPadDim> center_crop_pad_dims(const Node& node, const std::vector<ValueInfo>& inputs);

}  // namespace dnnx
