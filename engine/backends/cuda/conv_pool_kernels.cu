#include <algorithm>
#include <cfloat>

#include "backends/cuda/conv_pool_direct.h"
#include "backends/cuda/cuda_check.h"

namespace dnnx::cuda {

namespace {

constexpr int kThreads = 256;
// With few blocks (batch 1: one per filter, 20 or 50 for LeNet) most SMs idle and each block's
// threads wait on their loads one after another: a block of kFewBlocksThreads splits the input
// channels four times as finely, so that each thread's serial chain is a quarter as long.
constexpr int kFewBlocksThreads = 1024;
constexpr int64_t kFewBlocks = 512;
constexpr size_t kMaxSharedFloats = (48 << 10) / sizeof(float);
constexpr int kMaxRegion = 4096;  // conv outputs per (image, filter) the kernel holds

int threads_for(const DirectConvPool& p) { return p.n * p.m < kFewBlocks ? kFewBlocksThreads : kThreads; }

// Input channels are split over `splits` groups of threads so that small planes still fill the block.
int channel_splits(const DirectConvPool& p) {
  const int region = p.region_h() * p.region_w();
  return std::max(1, std::min(p.c, threads_for(p) / std::max(1, region)));
}

size_t shared_floats(const DirectConvPool& p) {
  return static_cast<size_t>(p.c) * p.kh * p.kw + static_cast<size_t>(channel_splits(p)) * p.region_h() * p.region_w();
}

// Block (image, filter) = blockIdx.x / m, % m. Shared: the filter [c, kh, kw], then the partial
// sums [splits, region]; after the reduction, partial[0][q] holds conv output q (bias, Relu applied).
__global__ void __launch_bounds__(kFewBlocksThreads) direct_conv_pool(const float* __restrict__ x, const float* __restrict__ w,
                                 const float* __restrict__ b, float* __restrict__ y, DirectConvPool p, int splits,
                                 bool relu) {
  extern __shared__ float smem[];
  const int taps = p.kh * p.kw;
  const int filter_size = p.c * taps;
  float* ws = smem;
  float* partial = ws + filter_size;
  const int64_t image = blockIdx.x / p.m;
  const int filter = static_cast<int>(blockIdx.x % p.m);
  for (int i = threadIdx.x; i < filter_size; i += blockDim.x) ws[i] = w[static_cast<int64_t>(filter) * filter_size + i];
  __syncthreads();

  const int rw = (p.pow - 1) * p.psw + p.pkw;  // region_w(), region_h(): host functions
  const int region = ((p.poh - 1) * p.psh + p.pkh) * rw;
  const int64_t plane = static_cast<int64_t>(p.h) * p.w;
  const float* xi = x + image * p.c * plane;
  for (int idx = threadIdx.x; idx < splits * region; idx += blockDim.x) {
    const int s = idx / region, q = idx % region;
    const int oy = q / rw, ox = q % rw;
    float acc = 0.0f;
    for (int ci = s; ci < p.c; ci += splits) {
      const float* xc = xi + ci * plane;
      const float* wc = ws + ci * taps;
      for (int ky = 0; ky < p.kh; ++ky) {
        const int iy = oy * p.sh + ky * p.dh - p.ph;
        if (iy < 0 || iy >= p.h) continue;
        for (int kx = 0; kx < p.kw; ++kx) {
          const int ix = ox * p.sw + kx * p.dw - p.pw;
          if (ix >= 0 && ix < p.w) acc = fmaf(__ldg(xc + iy * p.w + ix), wc[ky * p.kw + kx], acc);
        }
      }
    }
    partial[s * region + q] = acc;
  }
  __syncthreads();
  const float bias = b ? b[filter] : 0.0f;
  for (int q = threadIdx.x; q < region; q += blockDim.x) {
    float sum = partial[q];
    for (int s = 1; s < splits; ++s) sum += partial[s * region + q];  // a fixed order: deterministic
    sum += bias;
    partial[q] = relu ? fmaxf(sum, 0.0f) : sum;
  }
  __syncthreads();
  float* yi = y + (image * p.m + filter) * static_cast<int64_t>(p.poh) * p.pow;
  for (int o = threadIdx.x; o < p.poh * p.pow; o += blockDim.x) {
    const int py = o / p.pow, px = o % p.pow;
    float best = -FLT_MAX;
    for (int wy = 0; wy < p.pkh; ++wy) {
      const float* row = partial + (py * p.psh + wy) * rw + px * p.psw;
      for (int wx = 0; wx < p.pkw; ++wx) best = fmaxf(best, row[wx]);
    }
    yi[o] = best;
  }
}

}  // namespace

double DirectConvPool::macs() const {
  return static_cast<double>(n) * m * region_h() * region_w() * c * kh * kw;
}

bool direct_conv_pool_supported(const DirectConvPool& p) {
  if (p.n <= 0 || p.c <= 0 || p.m <= 0 || p.kh <= 0 || p.kw <= 0 || p.poh <= 0 || p.pow <= 0) return false;
  if (p.pkh <= 0 || p.pkw <= 0 || p.psh <= 0 || p.psw <= 0) return false;
  if (p.n * p.m > INT32_MAX) return false;
  return p.region_h() * p.region_w() <= kMaxRegion && shared_floats(p) <= kMaxSharedFloats;
}

void launch_direct_conv_pool(const float* x, const float* w, const float* b, float* y, const DirectConvPool& p,
                             bool relu, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>(p.n * p.m);
  direct_conv_pool<<<blocks, threads_for(p), shared_floats(p) * sizeof(float), stream>>>(x, w, b, y, p,
                                                                                         channel_splits(p), relu);
  check_launch("direct conv+pool kernel");
}

}  // namespace dnnx::cuda
