// ConvTranspose on cuDNN, what its forward (conv_transpose_cuda.cc) and gradient
// (conv_transpose_grad_cuda.cc) share: the adjoint Conv (ops/conv/conv_transpose.h) as cuDNN's
// descriptors see it. The adjoint's "x" is ConvTranspose's Y [N, M, out...], its "y" is X
// [N, C, in...], its filter W [C, M/group, k...]; where the pads differ between the two ends, the
// adjoint's x is padded explicitly (conv_layout.h): the forward computes the padded Y and crops
// it, the gradient pads dY.
#pragma once
#include "backends/cuda/conv/conv_layout.h"

namespace dnnx::cuda {

// xs, ws: ConvTranspose's X and W.
ConvLayout plan_conv_transpose_layout(const Node& node, const Shape& xs, const Shape& ws);

}  // namespace dnnx::cuda
