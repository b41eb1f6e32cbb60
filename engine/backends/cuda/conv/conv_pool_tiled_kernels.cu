// The direct conv+pool kernel's tiled path (conv_pool_direct.h): Conv (several input channels,
// 3x3 or 5x5, stride 1, no dilation) -> bias -> (Relu) -> MaxPool 2x2 stride 2, for batches
// whose (image, filter) pairs fill the GPU. Each thread computes one pooled output for
// kTileFilters filters: the 2 x 2 conv outputs under it, as a register tile of 4 x kTileFilters
// sums; per input channel it reads its (K+1) x (K+1) input patch once (from L1: an image's planes
// are a few KB and every thread of the image reads them) and then, for each tap, the tile's
// filter weights as two float4 loads from shared memory that every thread of the warp shares (a
// broadcast), so that each load feeds 16 multiply-adds. Each conv output sums its channels, then
// taps in (ky, kx) order, in plain fp32 FMAs (no TF32; deterministic). The block stages the
// weights of its chunk of kTileFilters filters ([channel][tap][filter], padded with zero filters
// past the last one); its threads then take (image, pooled output) items.
// Measured on an H200 (Note [narrow convolutions] in conv_pool_cuda.cc): faster than cuDNN's conv
// and pool for up to 16 filters, no faster beyond. Staging the block's images in shared memory
// instead measured slower (LeNet's conv2 at batch 256: 76 against 48 us: the staging serialises
// each block's start). Images per block (a sweep at e63d085, LeNet's conv2): 2, 4, 8, 16 took
// 67.7, 52.6, 47.6, 45.3 us at batch 256 and 8 images 132 us, 16 images 162 us at batch 1024;
// kTileBlockOutputs makes it 8 there. Two filter chunks per block were no faster (49.6-54.9 us).
#include <algorithm>
#include <cfloat>

#include "backends/cuda/conv/conv_pool_direct.h"
#include "backends/cuda/runtime/cuda_check.h"

namespace dnnx::cuda {

namespace {

constexpr int kTileMaxFilters = 16;  // the shapes it was measured to win (Note [narrow convolutions])
constexpr int kTileFilters = 8;      // filters per thread and per block: two float4 weight loads per tap
constexpr int kTileMaxThreads = 256;    // per block (a thread holds 32 sums and a 6 x 6 patch)
constexpr int kTileBlockOutputs = 128;  // pooled outputs per block, where the images allow
constexpr size_t kTileMaxShared = 48 << 10;  // the weights of one block's filter chunk

struct TileLaunch {
  int images = 1;   // per block
  int threads = 32;  // a multiple of 32
};

size_t tile_shared_bytes(const DirectConvPool& p) {
  return static_cast<size_t>(kTileFilters) * p.c * p.kh * p.kw * sizeof(float);
}

TileLaunch tile_launch_for(const DirectConvPool& p) {
  const int outputs = std::max(1, p.poh * p.pow);
  TileLaunch l;
  l.images = static_cast<int>(std::clamp<int64_t>(kTileBlockOutputs / outputs, 1, p.n));
  l.threads = std::min(kTileMaxThreads, (l.images * outputs + 31) / 32 * 32);
  return l;
}

// Grid (image groups, filter chunks of kTileFilters). Shared: the chunk's weights [c][K*K][8],
// zero-padded past the last filter.
template <int K>
__global__ void __launch_bounds__(kTileMaxThreads)
    direct_conv_pool_tiled(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                           float* __restrict__ y, DirectConvPool p, TileLaunch l, bool relu) {
  constexpr int kTaps = K * K;
  extern __shared__ float4 smem4[];
  float* ws = reinterpret_cast<float*>(smem4);
  const int m_begin = blockIdx.y * kTileFilters;
  const int m_count = min(kTileFilters, p.m - m_begin);
  const int filter_size = p.c * kTaps;
  for (int i = threadIdx.x; i < kTileFilters * filter_size; i += blockDim.x) {
    const int f = i % kTileFilters, tap = i / kTileFilters;  // tap = c * kTaps + ky * K + kx
    ws[i] = f < m_count ? w[static_cast<int64_t>(m_begin + f) * filter_size + tap] : 0.0f;
  }
  __syncthreads();

  const int outputs = p.poh * p.pow;
  const int64_t first_image = static_cast<int64_t>(blockIdx.x) * l.images;
  const int images = static_cast<int>(min(static_cast<int64_t>(l.images), p.n - first_image));
  const int64_t plane = static_cast<int64_t>(p.h) * p.w;
  const float4* w4 = reinterpret_cast<const float4*>(ws);
  for (int item = threadIdx.x; item < images * outputs; item += blockDim.x) {
    const int image = item / outputs, o = item % outputs;
    const int py = o / p.pow, px = o % p.pow;
    const int iy0 = 2 * py - p.ph, ix0 = 2 * px - p.pw;  // the patch's top-left input
    const float* xi = x + (first_image + image) * p.c * plane;
    float acc[kTileFilters][4] = {};
    for (int c = 0; c < p.c; ++c) {
      const float* xc = xi + c * plane;
      float patch[K + 1][K + 1];
#pragma unroll
      for (int r = 0; r < K + 1; ++r) {
#pragma unroll
        for (int s = 0; s < K + 1; ++s) {
          const int iy = iy0 + r, ix = ix0 + s;
          patch[r][s] = iy >= 0 && iy < p.h && ix >= 0 && ix < p.w ? __ldg(xc + iy * p.w + ix) : 0.0f;
        }
      }
      const float4* wc = w4 + c * kTaps * (kTileFilters / 4);
#pragma unroll
      for (int ky = 0; ky < K; ++ky) {
#pragma unroll
        for (int kx = 0; kx < K; ++kx) {
          const float4 lo = wc[(ky * K + kx) * 2];
          const float4 hi = wc[(ky * K + kx) * 2 + 1];
          const float wf[kTileFilters] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
          for (int f = 0; f < kTileFilters; ++f) {
            acc[f][0] = fmaf(patch[ky][kx], wf[f], acc[f][0]);
            acc[f][1] = fmaf(patch[ky][kx + 1], wf[f], acc[f][1]);
            acc[f][2] = fmaf(patch[ky + 1][kx], wf[f], acc[f][2]);
            acc[f][3] = fmaf(patch[ky + 1][kx + 1], wf[f], acc[f][3]);
          }
        }
      }
    }
    float* yo = y + ((first_image + image) * p.m + m_begin) * static_cast<int64_t>(outputs) + o;
#pragma unroll
    for (int f = 0; f < kTileFilters; ++f) {
      if (f >= m_count) break;
      const float bias = b ? b[m_begin + f] : 0.0f;
      float best = -FLT_MAX;
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const float v = acc[f][q] + bias;
        best = fmaxf(best, relu ? fmaxf(v, 0.0f) : v);
      }
      yo[static_cast<int64_t>(f) * outputs] = best;
    }
  }
}

}  // namespace

bool direct_conv_pool_tiled_supported(const DirectConvPool& p) {
  const bool window = p.kh == p.kw && (p.kh == 3 || p.kh == 5);
  const bool conv = p.c > 1 && p.m <= kTileMaxFilters && p.sh == 1 && p.sw == 1 && p.dh == 1 && p.dw == 1 && p.ph < p.kh && p.pw < p.kw;
  const bool pool = p.pkh == 2 && p.pkw == 2 && p.psh == 2 && p.psw == 2;
  // Every pooled output's 2 x 2 conv outputs lie in the conv's output plane.
  const bool inside = 2 * p.poh <= p.h + 2 * p.ph - p.kh + 1 && 2 * p.pow <= p.w + 2 * p.pw - p.kw + 1;
  return window && conv && pool && inside && p.n > 0 && p.m > 0 && p.poh > 0 && p.pow > 0 && p.n <= INT32_MAX &&
         tile_shared_bytes(p) <= kTileMaxShared;
}

void launch_direct_conv_pool_tiled(const float* x, const float* w, const float* b, float* y, const DirectConvPool& p,
                                   bool relu, cudaStream_t stream) {
  const TileLaunch l = tile_launch_for(p);
  const dim3 grid(static_cast<unsigned>((p.n + l.images - 1) / l.images),
                  static_cast<unsigned>((p.m + kTileFilters - 1) / kTileFilters));
  const unsigned threads = static_cast<unsigned>(l.threads);
  const size_t shared = tile_shared_bytes(p);
  if (p.kh == 5) {
    direct_conv_pool_tiled<5><<<grid, threads, shared, stream>>>(x, w, b, y, p, l, relu);
  } else {
    direct_conv_pool_tiled<3><<<grid, threads, shared, stream>>>(x, w, b, y, p, l, relu);
  }
  check_launch("direct conv+pool kernel (tiled)");
}

}  // namespace dnnx::cuda
