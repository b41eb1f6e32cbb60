// Direct gradients of a convolution, float32 NCHW (conv_grad_cuda.cc takes them in place of
// cuDNN's where they are faster: Note [direct conv gradients]):
//   dW [M, C, KH, KW] = sum over n, oy, ox of dY[n, m, oy, ox] * X[n, c, oy*sh + ky*dh - ph, ox*sw + kx*dw - pw]
//     for a small 2-D conv of group 1 (at most 256 weights a filter);
//   dB [M] = sum over n and the positions of dY[n, m, ...], for every conv.
// Plain fp32 FMAs and adds (no TF32), each result summed in an order fixed by the shape alone: no
// atomics, so the gradients are bit-identical from run to run whatever deterministic= says.
//
// Note [direct conv gradients]
// On an H100, the every-layer LeNet step at batch 256 spent 60% of its time in the two convs'
// backward calls, and most of that in cuDNN's bias gradient (calc_bias_diff: one block of 128
// threads per channel, 113 us for conv1's 20 channels over 256 x 24 x 24 positions, 67 us for
// conv2's 50) and in conv1's filter gradient (BWD_FILTER_ALGO_0, ~56 us, with atomics: not
// deterministic). Measured there:
//   - dB: blocks over (channel, chunk of images), each summing its chunk's planes, then one warp
//     per channel adding the chunks' sums in order: a read of dY at memory speed.
//   - dW, for convs of few weights a filter (conv1: 1 x 5 x 5): one block per (chunk of images,
//     tile of 8 filters); each thread owns one weight (c, ky, kx) for the tile's 8 filters and
//     walks output positions of each image of the chunk (X's planes and the 8 dY planes in shared
//     memory, dY as float4 pairs), groups of threads splitting the positions; the groups' sums,
//     then the chunks' sums, are added in a fixed order. 28 us for conv1 against ALGO_0's ~56.
//     It runs at a few percent of the GPU's FMA rate (each image's planes are loaded between two
//     barriers), so it is taken only up to 2^19 products an image (conv1: 288,000), where that
//     was measured to win; bigger convs keep cuDNN's algorithms.
//   - Not kept: the same filter kernel with 2 or 4 weights a thread for conv2 (20 x 5 x 5) took
//     112 us where cuDNN's WINOGRAD_NONFUSED and FFT took about 90 for dW and dX together; a
//     direct dX kernel (one block an image, 4 pixels x 4 channels a thread) took 126 us.
#pragma once
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace dnnx::cuda {

struct DirectConvGrad2d {
  int64_t n = 0;              // images
  int c = 0, h = 0, w = 0;    // input channels, input plane
  int m = 0, oh = 0, ow = 0;  // filters, output plane
  int kh = 0, kw = 0;
  int sh = 1, sw = 1, dh = 1, dw = 1;
  int ph = 0, pw = 0;  // padding before (after is implied by oh, ow)
};

// Whether the direct filter gradient takes this shape: a 2-D conv of group 1 with at most 256
// weights a filter and 2^19 products an image, one image's X planes plus 8 dY planes within the
// shared memory it uses.
bool direct_filter_grad_supported(const DirectConvGrad2d& g);
// Its workspace: the chunks' partial dW (256-byte aligned; 0 with one chunk).
size_t direct_filter_grad_workspace(const DirectConvGrad2d& g);
// dw [M, C, KH, KW] from x [N, C, H, W] and dy [N, M, OH, OW]; dw is overwritten.
void launch_direct_filter_grad(const float* x, const float* dy, float* dw, void* workspace,
                               const DirectConvGrad2d& g, cudaStream_t stream);

// The bias gradient db [m] of dy [n, m, plane] (any conv); its workspace holds the chunks' sums.
size_t conv_bias_grad_workspace(int64_t n, int64_t m);
void launch_conv_bias_grad(const float* dy, float* db, int64_t n, int64_t m, int64_t plane, void* workspace,
                           cudaStream_t stream);

}  // namespace dnnx::cuda
