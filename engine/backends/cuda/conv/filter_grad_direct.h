// Note [direct filter gradient]: dW and dB of a 2-D conv of few input channels (a first layer:
// LeNet's conv1 reads 1 channel, 5x5) without cuDNN. cuDNN's backward-filter algorithms are slow
// on such shapes: LeNet's conv1 at batch 256 took 170 us (BWD_FILTER_ALGO_0, the fastest the
// exhaustive search found) for 74 M multiply-adds, 27% of a whole-model training step. Here dW's
// C*KH*KW taps and dB are summed in registers by blocks over (filter, chunk of the N*OH*OW
// outputs), then the chunks' partial sums are added in chunk order by a second kernel: the sums'
// order is fixed by the shape alone, so the result is deterministic (no atomics) on any GPU.
// Plain fp32 FMAs. Any strides, dilations and pads (taps in the padding read zero).
//   x [N, C, H, W], dy [N, M, OH, OW] -> dw [M, C, KH, KW], db [M] (when asked for)
#pragma once
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace dnnx::cuda {

struct DirectFilterGrad {
  int64_t n = 0;
  int c = 0, h = 0, w = 0;  // input channels and plane
  int m = 0, oh = 0, ow = 0;  // filters and output plane
  int kh = 0, kw = 0, sh = 1, sw = 1, dh = 1, dw = 1;
  int ph = 0, pw = 0;  // padding before (after is implied by oh, ow)
};

constexpr int kDirectFilterGradMaxChannels = 4;
constexpr int kDirectFilterGradMaxTaps = 64;  // C * KH * KW: one register per tap and thread

// Whether the kernel takes this shape (channels and taps within the bounds above, sizes in int).
bool direct_filter_grad_supported(const DirectFilterGrad& s);
// The partial sums' scratch, bytes (a multiple of 256).
size_t direct_filter_grad_workspace(const DirectFilterGrad& s);
// db may be null; workspace: direct_filter_grad_workspace(s) bytes.
void launch_direct_filter_grad(const float* x, const float* dy, float* dw, float* db, void* workspace,
                               const DirectFilterGrad& s, cudaStream_t stream);

}  // namespace dnnx::cuda
