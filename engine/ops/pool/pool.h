// What MaxPool and AveragePool share: the output type of a window op over X [N, C, spatial...].
#pragma once
#include "ops/conv/conv_geometry.h"
#include "ops/op.h"

namespace dnnx {

// Y [N, C, out...] for X [N, C, spatial...] with 1 to 3 spatial dims, by ConvGeometry.
std::vector<TensorInfo> infer_pool_window(const Node& node, const std::vector<ValueInfo>& inputs);

}  // namespace dnnx
