// Col2Im (opset 18): the adjoint of im2col, summing blocks back into an image.
//   input [N, C * prod(block), L], image_shape [r] and block_shape [r] (int64 values known when
//   planning) -> Y [N, C, image...]; L must be the number of block positions,
//   prod over dims of (image + pads_begin + pads_end - ((block - 1) * dilation + 1)) / stride + 1.
// Y[n, c, p] = sum over (k, l) whose tap k of block l lands on p of input[n, c * K + k, l];
// taps in the padding are dropped.
#pragma once
#include "ops/op.h"

namespace dnnx {

struct Col2ImGeometry {
  int64_t batch = 0, channels = 0;
  Shape image, block, strides, dilations, pads_begin, blocks;  // blocks: positions per dim
};

Col2ImGeometry col2im_geometry(const Node& node, const std::vector<ValueInfo>& inputs);

}  // namespace dnnx
