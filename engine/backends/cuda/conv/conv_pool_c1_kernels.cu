// The direct conv+pool kernel's one-input-channel path (conv_pool_direct.h): Conv (1 input
// channel, 3x3 or 5x5, stride 1, no dilation) -> bias -> (Relu) -> MaxPool 2x2 stride 2, for
// batches whose (image, filter) blocks fill the GPU. Each thread computes two adjacent pooled
// outputs of one filter row from a (K+1) x (K+3) input patch held in registers: the 2 x 4 conv
// outputs under them, each summing its taps in (ky, kx) order from 0, then the bias, the Relu
// and the max, as the pair's direct one-channel conv (direct_conv_kernels.cu) and max pool do,
// so the result is bit-identical to the pair's. A block covers a few images (their planes in
// shared memory) and a chunk of the filters (their weights in shared memory); the chunks split
// the filters so that the grid has kTargetBlocks or more blocks.
#include <algorithm>
#include <cfloat>

#include "backends/cuda/conv/conv_pool_direct.h"
#include "backends/cuda/runtime/cuda_check.h"

namespace dnnx::cuda {

namespace {

constexpr int kMaxThreads = 256;
constexpr int kMaxImages = 8;           // images per block
// About two blocks per SM of an H100/H200. A sweep on the H200 (LeNet's conv1 + pool1, GPU time
// in a replayed graph): at batch 256, 12.5 us with 264 blocks of up to 256 threads, 17.3 with
// 1056, 12.8-17.0 with 96 or 512 threads; at batch 1024 28.3-29.3 us for 132-1056 blocks of 96
// or 256 threads (39-54 with 512).
constexpr int64_t kTargetBlocks = 264;
constexpr size_t kMaxSharedBytes = 48 << 10;

struct C1Launch {
  int images = 1;   // per block
  int filters = 1;  // per block
  int threads = 32;
  int items = 0;    // per image: pooled rows x column pairs
};

int items_per_image(const DirectConvPool& p) { return p.poh * ((p.pow + 1) / 2); }

C1Launch c1_launch_for(const DirectConvPool& p) {
  C1Launch l;
  l.items = items_per_image(p);
  l.images = std::max(1, std::min(kMaxImages, kMaxThreads / std::max(1, l.items)));
  l.threads = std::min(kMaxThreads, (l.images * l.items + 31) / 32 * 32);
  const int64_t image_blocks = (p.n + l.images - 1) / l.images;
  const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(p.m, kTargetBlocks / image_blocks));
  l.filters = static_cast<int>((p.m + chunks - 1) / chunks);
  return l;
}

size_t c1_shared_bytes(const DirectConvPool& p, const C1Launch& l) {
  return (static_cast<size_t>(l.filters) * (p.kh * p.kw + 1) + static_cast<size_t>(l.images) * p.h * p.w) *
         sizeof(float);
}

// Grid (image groups, filter chunks). Shared: the chunk's weights [filters, K*K], its biases
// [filters], the group's planes [images, h, w].
template <int K>
__global__ void direct_conv_pool_c1(const float* __restrict__ x, const float* __restrict__ w,
                                    const float* __restrict__ b, float* __restrict__ y, DirectConvPool p, C1Launch l,
                                    bool relu) {
  constexpr int kTaps = K * K;
  constexpr int kRows = K + 1, kCols = K + 3;  // the patch under 2 x 4 conv outputs
  extern __shared__ float smem[];
  float* ws = smem;                  // [filters, kTaps]
  float* bs = ws + l.filters * kTaps;  // [filters]
  float* xs = bs + l.filters;        // [images, h, w]
  const int64_t first_image = static_cast<int64_t>(blockIdx.x) * l.images;
  const int64_t left = p.n - first_image;
  const int images = left < l.images ? static_cast<int>(left) : l.images;
  const int m_begin = blockIdx.y * l.filters;
  const int m_count = min(l.filters, p.m - m_begin);
  for (int i = threadIdx.x; i < m_count * kTaps; i += blockDim.x) ws[i] = w[m_begin * kTaps + i];
  for (int i = threadIdx.x; i < m_count; i += blockDim.x) bs[i] = b ? b[m_begin + i] : 0.0f;
  const int plane = p.h * p.w;
  for (int i = threadIdx.x; i < images * plane; i += blockDim.x) xs[i] = x[first_image * plane + i];
  __syncthreads();

  const int pairs = (p.pow + 1) / 2;
  for (int item = threadIdx.x; item < images * l.items; item += blockDim.x) {
    const int image = item / l.items, q = item % l.items;
    const int py = q / pairs, px0 = (q % pairs) * 2;
    const int iy0 = 2 * py - p.ph, ix0 = 2 * px0 - p.pw;  // the patch's top-left input
    const float* xi = xs + image * plane;
    float patch[kRows][kCols];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
#pragma unroll
      for (int c = 0; c < kCols; ++c) {
        const int iy = iy0 + r, ix = ix0 + c;
        patch[r][c] = iy >= 0 && iy < p.h && ix >= 0 && ix < p.w ? xi[iy * p.w + ix] : 0.0f;
      }
    }
    float* yi = y + ((first_image + image) * p.m + m_begin) * static_cast<int64_t>(p.poh) * p.pow +
                static_cast<int64_t>(py) * p.pow + px0;
    for (int m = 0; m < m_count; ++m) {
      const float* wm = ws + m * kTaps;
      float acc[2][4] = {};
#pragma unroll
      for (int ky = 0; ky < K; ++ky) {
#pragma unroll
        for (int kx = 0; kx < K; ++kx) {
          const float wt = wm[ky * K + kx];
#pragma unroll
          for (int r = 0; r < 2; ++r) {
#pragma unroll
            for (int c = 0; c < 4; ++c) acc[r][c] = fmaf(patch[r + ky][c + kx], wt, acc[r][c]);
          }
        }
      }
      const float bias = bs[m];
      float* ym = yi + static_cast<int64_t>(m) * p.poh * p.pow;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        if (px0 + half >= p.pow) break;
        float best = -FLT_MAX;
#pragma unroll
        for (int r = 0; r < 2; ++r) {
#pragma unroll
          for (int c = 0; c < 2; ++c) {
            const float v = acc[r][2 * half + c] + bias;
            best = fmaxf(best, relu ? fmaxf(v, 0.0f) : v);
          }
        }
        ym[half] = best;
      }
    }
  }
}

}  // namespace

bool direct_conv_pool_c1_supported(const DirectConvPool& p) {
  const bool window = p.kh == p.kw && (p.kh == 3 || p.kh == 5);
  const bool conv = p.c == 1 && p.sh == 1 && p.sw == 1 && p.dh == 1 && p.dw == 1 && p.ph < p.kh && p.pw < p.kw;
  const bool pool = p.pkh == 2 && p.pkw == 2 && p.psh == 2 && p.psw == 2;
  return window && conv && pool && p.n > 0 && p.m > 0 && p.poh > 0 && p.pow > 0 &&
         (p.n + kMaxImages - 1) / kMaxImages <= INT32_MAX && c1_shared_bytes(p, c1_launch_for(p)) <= kMaxSharedBytes;
}

void launch_direct_conv_pool_c1(const float* x, const float* w, const float* b, float* y, const DirectConvPool& p,
                                bool relu, cudaStream_t stream) {
  const C1Launch l = c1_launch_for(p);
  const dim3 grid(static_cast<unsigned>((p.n + l.images - 1) / l.images),
                  static_cast<unsigned>((p.m + l.filters - 1) / l.filters));
  const size_t shared = c1_shared_bytes(p, l);
  if (p.kh == 5) {
    direct_conv_pool_c1<5><<<grid, l.threads, shared, stream>>>(x, w, b, y, p, l, relu);
  } else {
    direct_conv_pool_c1<3><<<grid, l.threads, shared, stream>>>(x, w, b, y, p, l, relu);
  }
  check_launch("direct conv+pool kernel (1 input channel)");
}

}  // namespace dnnx::cuda
