#include <algorithm>
#include <cfloat>

#include "backends/cuda/conv/conv_pool_direct.h"
#include "backends/cuda/runtime/cuda_check.h"

namespace dnnx::cuda {

namespace {

constexpr int kThreads = 256;
// Few blocks (batch 1: one per filter, 20 and 50 for LeNet's convs) leave most SMs idle, and each
// block's time is its threads' chains of dependent loads. There a block gets up to
// kFewBlocksThreads threads (the input channels split that much finer, each thread's chain that
// much shorter), and the image's input is first staged in shared memory, all of it in flight at
// once, so that the taps read shared memory rather than wait on L1/L2 one by one.
constexpr int kFewBlocksThreads = 1024;
constexpr int64_t kFewBlocks = 256;  // about two blocks per SM of an H100/H200 (132 SMs)
constexpr size_t kMaxSharedFloats = (48 << 10) / sizeof(float);
constexpr int kMaxRegion = 4096;  // conv outputs per (image, filter) the kernel holds

// How one launch runs: threads per block, channel splits, and whether the input is staged.
struct Launch {
  int threads = kThreads;
  int splits = 1;
  bool staged = false;
};

size_t shared_floats(const DirectConvPool& p, const Launch& l) {
  const size_t filter = static_cast<size_t>(p.c) * p.kh * p.kw;
  const size_t partial = static_cast<size_t>(l.splits) * p.region_h() * p.region_w();
  const size_t input = l.staged ? static_cast<size_t>(p.c) * p.h * p.w : 0;
  return filter + partial + input;
}

Launch launch_for(const DirectConvPool& p) {
  const int region = std::max(1, p.region_h() * p.region_w());
  Launch l;
  if (p.n * p.m < kFewBlocks) {
    // Input channels are split over `splits` groups of threads so that small planes still fill
    // the block; no more threads than splits x region have work.
    l.splits = std::max(1, std::min(p.c, kFewBlocksThreads / region));
    l.threads = std::min(kFewBlocksThreads, (l.splits * region + 31) / 32 * 32);
    l.staged = true;
    if (shared_floats(p, l) <= kMaxSharedFloats) return l;
    l.staged = false;
    if (shared_floats(p, l) <= kMaxSharedFloats) return l;
  }
  l = Launch{};
  l.splits = std::max(1, std::min(p.c, kThreads / region));
  return l;
}

// Block (image, filter) = blockIdx.x / m, % m. Shared: the filter [c, kh, kw], the partial sums
// [splits, region], then (kStaged) the image's input [c, h, w]; after the reduction,
// partial[0][q] holds conv output q (bias, Relu applied). KH, KW: the window when it is known at
// compile time (the tap loops unrolled), 0 when it is read from p.
template <int KH, int KW, bool kStaged>
__global__ void __launch_bounds__(kFewBlocksThreads)
    direct_conv_pool(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                     float* __restrict__ y, DirectConvPool p, int splits, bool relu) {
  extern __shared__ float smem[];
  const int kh = KH ? KH : p.kh, kw = KW ? KW : p.kw;
  const int taps = kh * kw;
  const int filter_size = p.c * taps;
  const int rw = (p.pow - 1) * p.psw + p.pkw;  // region_w(), region_h(): host functions
  const int region = ((p.poh - 1) * p.psh + p.pkh) * rw;
  float* ws = smem;
  float* partial = ws + filter_size;
  float* staged = partial + splits * region;
  const int64_t image = blockIdx.x / p.m;
  const int filter = static_cast<int>(blockIdx.x % p.m);
  const int64_t plane = static_cast<int64_t>(p.h) * p.w;
  const float* xi = x + image * p.c * plane;
  for (int i = threadIdx.x; i < filter_size; i += blockDim.x) ws[i] = w[static_cast<int64_t>(filter) * filter_size + i];
  if (kStaged) {
    for (int64_t i = threadIdx.x; i < p.c * plane; i += blockDim.x) staged[i] = __ldg(xi + i);
  }
  __syncthreads();

  for (int idx = threadIdx.x; idx < splits * region; idx += blockDim.x) {
    const int s = idx / region, q = idx % region;
    const int oy = q / rw, ox = q % rw;
    float acc = 0.0f;
    for (int ci = s; ci < p.c; ci += splits) {
      const float* xc = (kStaged ? staged : xi) + ci * plane;
      const float* wc = ws + ci * taps;
#pragma unroll
      for (int ky = 0; ky < kh; ++ky) {
        const int iy = oy * p.sh + ky * p.dh - p.ph;
        if (iy < 0 || iy >= p.h) continue;
#pragma unroll
        for (int kx = 0; kx < kw; ++kx) {
          const int ix = ox * p.sw + kx * p.dw - p.pw;
          if (ix < 0 || ix >= p.w) continue;
          const float v = kStaged ? xc[iy * p.w + ix] : __ldg(xc + iy * p.w + ix);
          acc = fmaf(v, wc[ky * kw + kx], acc);
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

template <int KH, int KW>
void launch_window(const float* x, const float* w, const float* b, float* y, const DirectConvPool& p, bool relu,
                   const Launch& l, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>(p.n * p.m);
  const size_t shared = shared_floats(p, l) * sizeof(float);
  if (l.staged) {
    direct_conv_pool<KH, KW, true><<<blocks, l.threads, shared, stream>>>(x, w, b, y, p, l.splits, relu);
  } else {
    direct_conv_pool<KH, KW, false><<<blocks, l.threads, shared, stream>>>(x, w, b, y, p, l.splits, relu);
  }
}

}  // namespace

double DirectConvPool::macs() const {
  return static_cast<double>(n) * m * region_h() * region_w() * c * kh * kw;
}

bool direct_conv_pool_one_channel(const DirectConvPool& p) {
  return p.n * p.m >= kFewBlocks && direct_conv_pool_c1_supported(p);
}

bool direct_conv_pool_tiled(const DirectConvPool& p) {
  return p.n * p.m >= kFewBlocks && direct_conv_pool_tiled_supported(p);
}

bool direct_conv_pool_supported(const DirectConvPool& p) {
  if (direct_conv_pool_one_channel(p) || direct_conv_pool_tiled(p)) return true;
  if (p.n <= 0 || p.c <= 0 || p.m <= 0 || p.kh <= 0 || p.kw <= 0 || p.poh <= 0 || p.pow <= 0) return false;
  if (p.pkh <= 0 || p.pkw <= 0 || p.psh <= 0 || p.psw <= 0) return false;
  if (p.n * p.m > INT32_MAX) return false;
  return p.region_h() * p.region_w() <= kMaxRegion && shared_floats(p, launch_for(p)) <= kMaxSharedFloats;
}

void launch_direct_conv_pool(const float* x, const float* w, const float* b, float* y, const DirectConvPool& p,
                             bool relu, cudaStream_t stream) {
  if (direct_conv_pool_one_channel(p)) {
    launch_direct_conv_pool_c1(x, w, b, y, p, relu, stream);
    return;
  }
  if (direct_conv_pool_tiled(p)) {
    launch_direct_conv_pool_tiled(x, w, b, y, p, relu, stream);
    return;
  }
  const Launch l = launch_for(p);
  if (p.kh == 5 && p.kw == 5) {
    launch_window<5, 5>(x, w, b, y, p, relu, l, stream);
  } else if (p.kh == 3 && p.kw == 3) {
    launch_window<3, 3>(x, w, b, y, p, relu, l, stream);
  } else {
    launch_window<0, 0>(x, w, b, y, p, relu, l, stream);
  }
  check_launch("direct conv+pool kernel");
}

}  // namespace dnnx::cuda
