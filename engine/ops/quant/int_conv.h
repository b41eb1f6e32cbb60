// ConvInteger's and QLinearConv's shared meaning: Conv's geometry (ops/conv/conv_geometry.h)
// over 8-bit X [N, C, spatial...] and W [M, C/group, k...].
#pragma once
#include "ops/conv/conv_geometry.h"
#include "ops/op.h"

namespace dnnx {

// The geometry of X over W, checking ranks, channels and group as Conv does; InvalidModelError
// naming the node and the shapes.
ConvGeometry int_conv_geometry(const Node& node, const Shape& x, const Shape& w);
// Y's shape: [N, M, out...].
Shape int_conv_output(const Shape& x, const Shape& w, const ConvGeometry& g);
// W's parameter (a zero point, a scale): a scalar, [1] or [M]; whether it is per output channel.
bool per_channel_param(const Node& node, const Shape& w, const Shape& param, const char* what);

}  // namespace dnnx
