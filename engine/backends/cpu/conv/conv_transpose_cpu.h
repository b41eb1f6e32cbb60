// What ConvTranspose's CPU kernel and its gradient share: the adjoint Conv's sizes
// (ops/conv/conv_transpose.h), in the im2col form of im2col_cpu.h.
#pragma once
#include "backends/cpu/conv/im2col_cpu.h"

namespace dnnx {

// channels = M (Y's), filters = C (X's), g = the adjoint geometry expanded to 3-D
// (g.input: Y's spatial dims, g.output: X's).
ConvShape conv_transpose_shape(const Node& node, const Shape& x, const Shape& w);

}  // namespace dnnx
