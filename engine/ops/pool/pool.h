// What MaxPool and AveragePool share: the output type of a window op over X [N, C, spatial...].
#pragma once
#include "ops/conv/conv_geometry.h"
#include "ops/op.h"

namespace dnnx {

// Y [N, C, out...] for X [N, C, spatial...] with 1 to 3 spatial dims, by ConvGeometry; X a float type.
std::vector<TensorInfo> infer_pool_window(const Node& node, const std::vector<ValueInfo>& inputs);
// The same, X also int8 or uint8 where `bytes_ok` (MaxPool from opset 12).
std::vector<TensorInfo> infer_pool_window_of(const Node& node, const std::vector<ValueInfo>& inputs, bool bytes_ok);

}  // namespace dnnx
