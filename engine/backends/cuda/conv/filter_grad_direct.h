// Note [direct filter gradient]: dW and dB of a 2-D conv of few input channels (a first layer:
// LeNet's conv1 reads 1 channel, 5x5) without cuDNN. cuDNN's backward-filter algorithms are slow
// on such shapes: LeNet's conv1 at batch 256 took 170 us (BWD_FILTER_ALGO_0, the fastest the
// exhaustive search found) for 74 M multiply-adds, 27% of a whole-model training step. dW is a
// GEMM with a long inner dim: dW [M, C*KH*KW] = dY [M, N*OH*OW] x col [N*OH*OW, C*KH*KW]. Each
// block sums one chunk of the outputs, tile by tile (dY's and the taps' values of 32 outputs in
// shared memory, col built on the fly), each thread a few (filter, tap) sums; a second kernel adds
// the chunks' partial sums in chunk order. The order of every sum follows from the shape alone,
// so the result is deterministic (no atomics) on any GPU. Products and sums in double, rounded
// once: long fp32 sums of gradients that cancel drift (LeNet's conv1 bias sums 36864 terms at
// batch 64), and the result is then as close to the exact sum as float allows. (A first form, one
// block per filter with the taps in registers, spent 280 us on address arithmetic.) Any strides,
// dilations and pads (taps in the padding read zero).
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
constexpr int kDirectFilterGradMaxTaps = 64;  // C * KH * KW (and M * (taps + 1) <= 2048)

// Whether the kernel takes this shape (channels and taps within the bounds above, sizes in int).
bool direct_filter_grad_supported(const DirectFilterGrad& s);
// The partial sums' scratch, bytes (a multiple of 256).
size_t direct_filter_grad_workspace(const DirectFilterGrad& s);
// db may be null; workspace: direct_filter_grad_workspace(s) bytes.
void launch_direct_filter_grad(const float* x, const float* dy, float* dw, float* db, void* workspace,
                               const DirectFilterGrad& s, cudaStream_t stream);

}  // namespace dnnx::cuda
