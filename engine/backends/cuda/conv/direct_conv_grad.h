// Direct gradients of a small 2-D convolution, float32 NCHW, group 1 (conv_grad_cuda.cc takes them
// in place of cuDNN's backward algorithms where the shape fits: Note [direct conv gradients]):
//   dW [M, C, KH, KW] = sum over n, oy, ox of dY[n, m, oy, ox] * X[n, c, oy*sh + ky*dh - ph, ox*sw + kx*dw - pw]
//   dX [N, C, H, W]   = sum over m, ky, kx of W[m, c, ky, kx] * dY[n, m, iy + ph - ky, ix + pw - kx]  (stride 1)
// Plain fp32 FMAs (no TF32), each result summed in an order fixed by the shape alone: no atomics,
// so the gradients are bit-identical from run to run whatever deterministic= says.
//
// Note [direct conv gradients]
// cuDNN's backward algorithms are slow on the narrow convs of small images: on an H100, LeNet's
// conv1 (1 -> 20 channels, 5x5, 28x28) took 168 us for dW alone at batch 256 (BWD_FILTER_ALGO_0,
// whose atomics are not even deterministic), conv2 (20 -> 50, 5x5, 12x12) 164 us for dW and dX
// (FFT): 60% of the every-layer training step. Both are a few hundred million FMAs, a few
// microseconds of the GPU's arithmetic. The direct kernels keep a sample's planes in shared memory:
//   - dW: one block per (chunk of images, tile of 8 filters). Each thread owns up to 4 weights
//     (c, ky, kx) for the tile's 8 filters (32 accumulators) and walks the output positions of
//     each image of the chunk (X's plane and the 8 dY planes in shared memory); where a filter has
//     few weights (conv1: 25), groups of threads split the positions and are summed in a fixed
//     order. A second kernel sums the chunks' partial dW in order.
//   - dX: one block per image; each thread 4 adjacent input pixels of one row for 4 channels,
//     summing over the filters and the taps that land inside dY (dY's planes in shared memory,
//     zero-padded along the row; W read as float4 of 4 channels from a transposed copy).
#pragma once
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace dnnx::cuda {

struct DirectConvGrad2d {
  int64_t n = 0;               // images
  int c = 0, h = 0, w = 0;     // input channels, input plane
  int m = 0, oh = 0, ow = 0;   // filters, output plane
  int kh = 0, kw = 0;
  int sh = 1, sw = 1, dh = 1, dw = 1;
  int ph = 0, pw = 0;  // padding before (after is implied by oh, ow)
};

// Whether the direct filter gradient takes this shape: at most 1024 weights per filter, at most
// 64k weights, and one image's X plane plus 8 dY planes within the shared memory it uses.
bool direct_filter_grad_supported(const DirectConvGrad2d& g);
// Its workspace: the chunks' partial dW (256-byte aligned).
size_t direct_filter_grad_workspace(const DirectConvGrad2d& g);
// dw [M, C, KH, KW] from x [N, C, H, W] and dy [N, M, OH, OW]; dw is overwritten.
void launch_direct_filter_grad(const float* x, const float* dy, float* dw, void* workspace,
                               const DirectConvGrad2d& g, cudaStream_t stream);

// Whether the direct data gradient takes this shape: stride 1, dilation 1, 3x3, 5x5 or 7x7
// windows (KH <= 7, KW of 3, 5 or 7), W within 128 KiB, one image's dY planes (zero-padded rows)
// within the shared memory it uses.
bool direct_data_grad_supported(const DirectConvGrad2d& g);
// Its workspace: W transposed to [M, KH, KW, C rounded up to 4] (256-byte aligned).
size_t direct_data_grad_workspace(const DirectConvGrad2d& g);
// dx [N, C, H, W] from w [M, C, KH, KW] and dy [N, M, OH, OW]; dx is overwritten.
void launch_direct_data_grad(const float* w, const float* dy, float* dx, void* workspace, const DirectConvGrad2d& g,
                             cudaStream_t stream);

}  // namespace dnnx::cuda
