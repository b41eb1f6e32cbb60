// A direct Conv -> (Relu) -> MaxPool for small problems (conv_pool_cuda.cc offers it beside the
// cuDNN conv + pool pair): x [N, C, H, W], w [M, C, KH, KW], b [M] -> y [N, M, PH, PW], 2-D,
// group 1; the pool without pads or dilations, floor rounding. One block per (image, filter):
// the filter in shared memory, the conv outputs the pool reads computed in shared memory (the
// input channels split over the threads and the partial sums added in a fixed order, so the
// result is deterministic), then the bias, the Relu and the max. With few blocks (small batches)
// a block has up to 1024 threads and first stages the image's input in shared memory
// (conv_pool_kernels.cu says why). Plain fp32 FMAs (no TF32). It exists for latency: at batch 1,
// LeNet's conv2 + pool2 are two cuDNN calls of 17 and 4 us.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

namespace dnnx::cuda {

struct DirectConvPool {
  int64_t n = 0;               // images (0: the shape is not taken)
  int c = 0, h = 0, w = 0;     // input channels and plane
  int m = 0;                   // filters
  int kh = 0, kw = 0, sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;  // conv window, pads before
  int pkh = 0, pkw = 0, psh = 1, psw = 1;  // pool window and strides
  int poh = 0, pow = 0;        // pooled output plane

  // The conv outputs the pool reads: rows [0, region_h), columns [0, region_w).
  int region_h() const { return (poh - 1) * psh + pkh; }
  int region_w() const { return (pow - 1) * psw + pkw; }
  // Multiply-adds of the convolution part (what the heuristic planner weighs).
  double macs() const;
};

// Whether the kernel takes this shape: the filter and the region's partial sums fit in shared
// memory, or the one-channel path takes it.
bool direct_conv_pool_supported(const DirectConvPool& p);

// The one-input-channel path (conv_pool_c1_kernels.cu): 1 input channel, a 3x3 or 5x5 window
// of stride 1, a 2x2 pool of stride 2, for batches that fill the GPU (n x m blocks at least
// those of the few-blocks launch, which keeps batch 1). Measured on an H200, LeNet's conv1 +
// pool1 at batch 256: the pair (the direct one-channel conv, then cuDNN's pool) 12.6 + 6.9 us.
// Used by launch_direct_conv_pool whenever it applies; the heuristic planner then takes the
// direct kernel at any size (bench/RESULTS_CUDA.md has its time).
bool direct_conv_pool_one_channel(const DirectConvPool& p);
bool direct_conv_pool_c1_supported(const DirectConvPool& p);
void launch_direct_conv_pool_c1(const float* x, const float* w, const float* b, float* y, const DirectConvPool& p,
                                bool relu, cudaStream_t stream);

// The tiled path for several input channels (conv_pool_tiled_kernels.cu): up to 16 filters, a
// 3x3 or 5x5 window of stride 1, a 2x2 pool of stride 2, for batches that fill the GPU (n x m
// blocks at least those of the few-blocks launch, which keeps batch 1). Used by
// launch_direct_conv_pool whenever it applies; the heuristic planner then takes the direct
// kernel at any size (Note [narrow convolutions] in conv_pool_cuda.cc).
bool direct_conv_pool_tiled(const DirectConvPool& p);
bool direct_conv_pool_tiled_supported(const DirectConvPool& p);
void launch_direct_conv_pool_tiled(const float* x, const float* w, const float* b, float* y, const DirectConvPool& p,
                                   bool relu, cudaStream_t stream);

// b may be null (no bias).
void launch_direct_conv_pool(const float* x, const float* w, const float* b, float* y, const DirectConvPool& p,
                             bool relu, cudaStream_t stream);

}  // namespace dnnx::cuda
