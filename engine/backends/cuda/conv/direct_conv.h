// A direct convolution for one input channel (conv_cuda.cc offers it to the planner beside
// cuDNN's algorithms): x [N, 1, H, W], w [M, 1, KH, KW], b [M] -> y [N, M, OH, OW], 2-D, group 1,
// bias and (optionally) Relu in the same kernel. Plain fp32 FMAs (no TF32), the taps of each
// output summed in order, then the bias added. cuDNN's general algorithms are slow on this shape
// (LeNet's conv1: 92 us at batch 1024 with a separate 24 us bias add).
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

namespace dnnx::cuda {

struct DirectConv2d {
  int64_t n = 0;       // images
  int h = 0, w = 0;    // input plane
  int oh = 0, ow = 0;  // output plane
  int m = 0;           // filters
  int kh = 0, kw = 0;
  int sh = 1, sw = 1, dh = 1, dw = 1;
  int ph = 0, pw = 0;  // padding before (after is implied by oh, ow)
};

// Whether the direct kernel takes this shape: 3x3 or 5x5 filters whose weights and input plane fit
// in shared memory.
bool direct_conv_supported(const DirectConv2d& c);

// b may be null (no bias).
void launch_direct_conv(const float* x, const float* w, const float* b, float* y, const DirectConv2d& c, bool relu,
                        cudaStream_t stream);

}  // namespace dnnx::cuda
