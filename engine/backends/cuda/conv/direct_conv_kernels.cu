#include <algorithm>

#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/conv/direct_conv.h"

namespace dnnx::cuda {

namespace {

constexpr int kPixels = 4;  // adjacent output pixels per thread (each weight read once for them)
constexpr size_t kMaxSharedBytes = 48 << 10;
constexpr int64_t kTargetBlocks = 264;  // about two blocks per SM of an H100/H200

__host__ __device__ constexpr int padded_taps(int taps) { return (taps + 3) / 4 * 4; }

size_t shared_bytes(const DirectConv2d& c) {
  const int taps = padded_taps(c.kh * c.kw);
  return (static_cast<size_t>(c.m) * taps + c.m + static_cast<size_t>(c.h) * c.w) * sizeof(float);
}

// One block per (image, chunk of filters): the image's plane, the weights and the bias in shared
// memory; each thread kPixels adjacent outputs of one row, for every filter of the chunk.
template <int KH, int KW>
__global__ void direct_conv_c1(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                               float* __restrict__ y, DirectConv2d c, int filters_per_block, bool relu) {
  constexpr int kTaps = KH * KW;
  constexpr int kStride = padded_taps(kTaps);
  extern __shared__ float smem[];
  float* ws = smem;                 // [m, kStride]
  float* bs = ws + c.m * kStride;   // [m]
  float* xs = bs + c.m;             // [h, w]
  const int64_t image = blockIdx.x;
  const int m_begin = blockIdx.y * filters_per_block;
  const int m_end = min(c.m, m_begin + filters_per_block);
  for (int i = threadIdx.x; i < c.m * kTaps; i += blockDim.x) ws[(i / kTaps) * kStride + i % kTaps] = w[i];
  for (int i = threadIdx.x; i < c.m; i += blockDim.x) bs[i] = b ? b[i] : 0.0f;
  const int plane_in = c.h * c.w;
  const float* xi = x + image * plane_in;
  for (int i = threadIdx.x; i < plane_in; i += blockDim.x) xs[i] = xi[i];
  __syncthreads();

  const int groups_x = (c.ow + kPixels - 1) / kPixels;
  const int groups = c.oh * groups_x;
  const int64_t plane_out = static_cast<int64_t>(c.oh) * c.ow;
  float* yi = y + image * c.m * plane_out;
  for (int g = threadIdx.x; g < groups; g += blockDim.x) {
    const int oy = g / groups_x, ox0 = (g % groups_x) * kPixels;
    float v[kPixels][kTaps];
#pragma unroll
    for (int p = 0; p < kPixels; ++p) {
#pragma unroll
      for (int ky = 0; ky < KH; ++ky) {
        const int iy = oy * c.sh + ky * c.dh - c.ph;
#pragma unroll
        for (int kx = 0; kx < KW; ++kx) {
          const int ix = (ox0 + p) * c.sw + kx * c.dw - c.pw;
          v[p][ky * KW + kx] = iy >= 0 && iy < c.h && ix >= 0 && ix < c.w ? xs[iy * c.w + ix] : 0.0f;
        }
      }
    }
    for (int m = m_begin; m < m_end; ++m) {
      const float* wm = ws + m * kStride;
      float acc[kPixels];
#pragma unroll
      for (int p = 0; p < kPixels; ++p) acc[p] = 0.0f;
#pragma unroll
      for (int t = 0; t < kTaps; ++t) {
        const float wt = wm[t];
#pragma unroll
        for (int p = 0; p < kPixels; ++p) acc[p] = fmaf(v[p][t], wt, acc[p]);
      }
      const float bias = bs[m];
      float* ym = yi + m * plane_out + static_cast<int64_t>(oy) * c.ow + ox0;
#pragma unroll
      for (int p = 0; p < kPixels; ++p) {
        if (ox0 + p < c.ow) {
          const float r = acc[p] + bias;
          ym[p] = relu ? fmaxf(r, 0.0f) : r;
        }
      }
    }
  }
}

template <int KH, int KW>
void launch(const float* x, const float* w, const float* b, float* y, const DirectConv2d& c, bool relu,
            cudaStream_t stream) {
  const int groups = c.oh * ((c.ow + kPixels - 1) / kPixels);
  const int threads = std::max(32, std::min(256, (groups + 31) / 32 * 32));
  // Small batches split the filters over more blocks so that the GPU fills.
  const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(c.m, kTargetBlocks / std::max<int64_t>(1, c.n)));
  const int per_block = static_cast<int>((c.m + chunks - 1) / chunks);
  const dim3 grid(static_cast<unsigned>(c.n), static_cast<unsigned>((c.m + per_block - 1) / per_block));
  direct_conv_c1<KH, KW><<<grid, threads, shared_bytes(c), stream>>>(x, w, b, y, c, per_block, relu);
}

}  // namespace

bool direct_conv_supported(const DirectConv2d& c) {
  const bool sizes = (c.kh == 3 && c.kw == 3) || (c.kh == 5 && c.kw == 5);
  return sizes && c.n > 0 && c.n <= INT32_MAX && c.m > 0 && c.oh > 0 && c.ow > 0 &&
         shared_bytes(c) <= kMaxSharedBytes;
}

void launch_direct_conv(const float* x, const float* w, const float* b, float* y, const DirectConv2d& c, bool relu,
                        cudaStream_t stream) {
  if (c.kh == 3) {
    launch<3, 3>(x, w, b, y, c, relu, stream);
  } else {
    launch<5, 5>(x, w, b, y, c, relu, stream);
  }
  check_launch("direct convolution kernel");
}

}  // namespace dnnx::cuda
