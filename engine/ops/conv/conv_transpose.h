// ConvTranspose's meaning, shared by the op file and every backend. ConvTranspose is the adjoint
// (the data gradient) of a Conv, and every backend runs it as one:
//   ConvTranspose: X [N, C, in...], W [C, M/group, k...], B [M] -> Y [N, M, out...]
//   its adjoint Conv: input Y [N, M, out...], weight W (C filters of M/group channels each),
//                     output X [N, C, in...], with ConvTranspose's strides, dilations, pads, group
// so Y = conv_data_gradient(W, X) + B, and ConvTranspose's own gradients are the adjoint Conv's
// forward (dX = Conv(dY, W)) and filter gradient (dW from dY and X).
//   out = stride * (in - 1) + output_padding + (k - 1) * dilation + 1 - pad_begin - pad_end,
// or output_shape when given; auto_pad SAME_* takes out = in * stride. With SAME_* or output_shape
// the pads are those that reach that size (onnxruntime's rule: never negative, the larger half at
// the end for SAME_UPPER and at the start otherwise), and a larger size leaves Y's last positions
// to the bias alone.
#pragma once
#include "ops/conv/conv_geometry.h"

namespace dnnx {

// The adjoint Conv's geometry (`input`: Y's spatial dims, `output`: X's) for X's spatial dims
// `x_spatial` and W's `kernel`. Positions of Y past the last window (output_padding, a larger
// output_shape) receive nothing but the bias. Throws InvalidModelError with the shapes for what
// cannot be.
ConvGeometry conv_transpose_geometry(const Node& node, const Shape& x_spatial, const Shape& kernel);

}  // namespace dnnx
