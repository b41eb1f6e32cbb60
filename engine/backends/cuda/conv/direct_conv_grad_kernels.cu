// The direct conv gradients of direct_conv_grad.h (Note [direct conv gradients] there).
#include <algorithm>

#include "backends/cuda/conv/direct_conv_grad.h"
#include "backends/cuda/runtime/block_reduce.cuh"
#include "backends/cuda/runtime/cuda_check.h"

namespace dnnx::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kFilterTile = 8;          // filters per dW block: two float4 of dY per output position
constexpr int kMaxPositionGroups = 32;  // threads splitting one weight's output positions
constexpr size_t kSharedBytes = 44 << 10;  // under the 48 KiB a block gets without opting in
constexpr int64_t kTargetBlocks = 528;     // about four dW blocks per SM of an H100/H200
constexpr int kMaxWeightsPerFilter = kThreads;  // one weight a thread (Note [direct conv gradients])
constexpr int64_t kMaxProductsPerImage = 1 << 19;  // M * C*KH*KW * OH*OW: LeNet's conv1 has 288,000

size_t align256(size_t n) { return (n + 255) / 256 * 256; }

int64_t weights_per_filter(const DirectConvGrad2d& g) { return int64_t{g.c} * g.kh * g.kw; }

// --- dW ---------------------------------------------------------------------------------------

// The n images in chunks, so that `others` blocks per chunk make about kTargetBlocks in all.
struct ImageChunks {
  int64_t images_per_chunk = 0, chunks = 0;
};

ImageChunks image_chunks(int64_t n, int64_t others) {
  ImageChunks s;
  const int64_t want = std::max<int64_t>(1, std::min<int64_t>(n, (kTargetBlocks + others - 1) / others));
  s.images_per_chunk = (n + want - 1) / want;
  s.chunks = (n + s.images_per_chunk - 1) / s.images_per_chunk;
  return s;
}

// How the filter gradient splits: one thread a weight (c, ky, kx) of a filter, `groups` of such
// threads over the output positions; blocks over chunks of images and tiles of kFilterTile filters.
struct FilterGradSplit : ImageChunks {
  int groups = 1;
  int tiles = 0;  // filter tiles
};

FilterGradSplit filter_grad_split(const DirectConvGrad2d& g) {
  FilterGradSplit s;
  s.groups = std::max(1, std::min(kMaxPositionGroups, static_cast<int>(kThreads / weights_per_filter(g))));
  s.tiles = (g.m + kFilterTile - 1) / kFilterTile;
  static_cast<ImageChunks&>(s) = image_chunks(g.n, s.tiles);
  return s;
}

// [plane, kFilterTile] of dY and [C, H, W] of X while summing; [groups, slots, kFilterTile] partial
// sums after.
size_t filter_grad_shared(const DirectConvGrad2d& g, const FilterGradSplit& s) {
  const size_t load = (size_t{1} * g.oh * g.ow * kFilterTile + size_t{1} * g.c * g.h * g.w) * sizeof(float);
  const size_t reduce = size_t{1} * s.groups * weights_per_filter(g) * kFilterTile * sizeof(float);
  return std::max(load, reduce);
}

// partial [chunks, M, C*KH*KW]: one block per (chunk of images, tile of kFilterTile filters);
// thread (group, slot) sums weight `slot` over the output positions group, group + groups, ...
// of each image, then the groups' sums are added in group order.
template <bool kPadded>
__global__ void __launch_bounds__(kThreads)
    filter_grad_partials(const float* __restrict__ x, const float* __restrict__ dy, float* __restrict__ partial,
                         DirectConvGrad2d g, int groups, int64_t images_per_chunk) {
  extern __shared__ float4 smem4[];
  float* smem = reinterpret_cast<float*>(smem4);
  const int plane = g.oh * g.ow, taps = g.kh * g.kw, in_plane = g.h * g.w;
  const int slots = g.c * taps;            // one weight (c, ky, kx) a slot
  float* dys = smem;                       // [plane, kFilterTile]: float4 pairs smem4[2p], smem4[2p + 1]
  float* xs = smem + plane * kFilterTile;  // [C, H, W]
  const int64_t chunk = blockIdx.x;
  const int m0 = blockIdx.y * kFilterTile;
  const int64_t first = chunk * images_per_chunk, last = min(g.n, first + images_per_chunk);
  const int slot = threadIdx.x % slots, group = threadIdx.x / slots;
  const bool active = group < groups;
  const int c = slot / taps, r = slot - c * taps, ky = r / g.kw, kx = r - ky * g.kw;
  const int y_tap = ky * g.dh, x_tap = kx * g.dw, x_offset = c * in_plane;
  float acc[kFilterTile] = {};

  for (int64_t image = first; image < last; ++image) {
    __syncthreads();  // the previous image's planes are read
    const float* xi = x + image * g.c * in_plane;
    for (int i = threadIdx.x; i < g.c * in_plane; i += kThreads) xs[i] = xi[i];
    const float* dyi = dy + (image * g.m + m0) * plane;  // [kFilterTile, plane] of this image
    for (int i = threadIdx.x; i < kFilterTile * plane; i += kThreads) {
      const int f = i / plane, p = i - f * plane;
      dys[p * kFilterTile + f] = m0 + f < g.m ? dyi[i] : 0.0f;
    }
    __syncthreads();
    if (!active) continue;
    // Output position p = oy * OW + ox, from `group` on in steps of `groups` (the row wraps
    // without a division).
    int oy = group / g.ow, ox = group - oy * g.ow;
    for (int p = group; p < plane; p += groups) {
      const int iy = oy * g.sh - g.ph + y_tap, ix = ox * g.sw - g.pw + x_tap;
      for (ox += groups; ox >= g.ow; ox -= g.ow) ++oy;
      if (kPadded && (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w)) continue;  // padding: a zero term
      const float v = xs[x_offset + iy * g.w + ix];
      const float4 d0 = smem4[2 * p], d1 = smem4[2 * p + 1];
      acc[0] = fmaf(v, d0.x, acc[0]);
      acc[1] = fmaf(v, d0.y, acc[1]);
      acc[2] = fmaf(v, d0.z, acc[2]);
      acc[3] = fmaf(v, d0.w, acc[3]);
      acc[4] = fmaf(v, d1.x, acc[4]);
      acc[5] = fmaf(v, d1.y, acc[5]);
      acc[6] = fmaf(v, d1.z, acc[6]);
      acc[7] = fmaf(v, d1.w, acc[7]);
    }
  }

  __syncthreads();     // every thread is done with the planes: the memory now holds the groups' sums
  float* sums = smem;  // [groups, slots, kFilterTile]
  if (active) {
#pragma unroll
    for (int f = 0; f < kFilterTile; ++f) sums[(group * slots + slot) * kFilterTile + f] = acc[f];
  }
  __syncthreads();
  float* out = partial + chunk * g.m * slots;
  for (int i = threadIdx.x; i < slots * kFilterTile; i += kThreads) {
    const int q = i / kFilterTile, f = i - q * kFilterTile;
    if (m0 + f >= g.m) continue;
    float sum = 0.0f;
    for (int k = 0; k < groups; ++k) sum += sums[(k * slots + q) * kFilterTile + f];
    out[(m0 + f) * slots + q] = sum;
  }
}

// out[i] = the chunks' partial[., i] summed: one warp per output, its lanes over the chunks, then
// the lanes' sums by shuffles in a fixed order (deterministic).
__global__ void sum_chunks(const float* __restrict__ partial, float* __restrict__ out, int64_t count, int64_t chunks) {
  const int64_t i = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) / kWarpSize;
  const int lane = threadIdx.x % kWarpSize;
  if (i >= count) return;  // the whole warp
  float sum = 0.0f;
  for (int64_t c = lane; c < chunks; c += kWarpSize) sum += partial[c * count + i];
  for (int o = kWarpSize / 2; o > 0; o /= 2) sum += __shfl_down_sync(0xffffffffu, sum, o);
  if (lane == 0) out[i] = sum;
}

void launch_sum_chunks(const float* partial, float* out, int64_t count, int64_t chunks, cudaStream_t stream) {
  const int64_t threads = count * kWarpSize;
  sum_chunks<<<static_cast<unsigned>((threads + kThreads - 1) / kThreads), kThreads, 0, stream>>>(partial, out, count,
                                                                                                 chunks);
  check_launch("conv gradient chunk-sum kernel");
}

// --- dB -----------------------------------------------------------------------------------------

// partial[chunk, m] = the sum of dY[n, m, :] over the chunk's images: one block per (m, chunk),
// its threads over the chunk's planes, then the block's sum (fixed order).
__global__ void __launch_bounds__(kThreads)
    bias_grad_partials(const float* __restrict__ dy, float* __restrict__ partial, int64_t n, int64_t m, int64_t plane,
                       int64_t images_per_chunk) {
  __shared__ float warp_sums[kThreads / kWarpSize];
  const int64_t filter = blockIdx.x, chunk = blockIdx.y;
  const int64_t first = chunk * images_per_chunk, last = min(n, first + images_per_chunk);
  float sum = 0.0f;
  for (int64_t image = first; image < last; ++image) {
    const float* row = dy + (image * m + filter) * plane;
    for (int64_t i = threadIdx.x; i < plane; i += kThreads) sum += row[i];
  }
  sum = block_sum_all(sum, warp_sums);
  if (threadIdx.x == 0) partial[chunk * m + filter] = sum;
}

bool shape_is_valid(const DirectConvGrad2d& g) {
  return g.n > 0 && g.c > 0 && g.h > 0 && g.w > 0 && g.m > 0 && g.oh > 0 && g.ow > 0 && g.kh > 0 && g.kw > 0;
}

}  // namespace

bool direct_filter_grad_supported(const DirectConvGrad2d& g) {
  if (!shape_is_valid(g) || weights_per_filter(g) > kMaxWeightsPerFilter || g.m > kFilterTile * 65535) return false;
  // Measured to win only on small work per image (Note [direct conv gradients]).
  if (int64_t{g.m} * weights_per_filter(g) * g.oh * g.ow > kMaxProductsPerImage) return false;
  return filter_grad_shared(g, filter_grad_split(g)) <= kSharedBytes;
}

size_t direct_filter_grad_workspace(const DirectConvGrad2d& g) {
  const FilterGradSplit s = filter_grad_split(g);
  return s.chunks > 1 ? align256(static_cast<size_t>(s.chunks) * g.m * weights_per_filter(g) * sizeof(float)) : 0;
}

void launch_direct_filter_grad(const float* x, const float* dy, float* dw, void* workspace, const DirectConvGrad2d& g,
                               cudaStream_t stream) {
  const FilterGradSplit s = filter_grad_split(g);
  float* partial = s.chunks > 1 ? static_cast<float*>(workspace) : dw;
  const dim3 grid(static_cast<unsigned>(s.chunks), static_cast<unsigned>(s.tiles));
  const size_t shared = filter_grad_shared(g, s);
  // Without pads every tap of an output position lies inside X (ONNX's output size).
  if (g.ph == 0 && g.pw == 0 && (g.oh - 1) * g.sh + (g.kh - 1) * g.dh < g.h && (g.ow - 1) * g.sw + (g.kw - 1) * g.dw < g.w) {
    filter_grad_partials<false><<<grid, kThreads, shared, stream>>>(x, dy, partial, g, s.groups, s.images_per_chunk);
  } else {
    filter_grad_partials<true><<<grid, kThreads, shared, stream>>>(x, dy, partial, g, s.groups, s.images_per_chunk);
  }
  check_launch("direct filter-gradient kernel");
  if (s.chunks > 1) launch_sum_chunks(partial, dw, g.m * weights_per_filter(g), s.chunks, stream);
}

size_t conv_bias_grad_workspace(int64_t n, int64_t m) {
  const ImageChunks s = image_chunks(n, m);  // blocks over (filter, chunk of images)
  return s.chunks > 1 ? align256(static_cast<size_t>(s.chunks * m) * sizeof(float)) : 0;
}

void launch_conv_bias_grad(const float* dy, float* db, int64_t n, int64_t m, int64_t plane, void* workspace,
                           cudaStream_t stream) {
  const ImageChunks s = image_chunks(n, m);  // blocks over (filter, chunk of images)
  float* partial = s.chunks > 1 ? static_cast<float*>(workspace) : db;
  const dim3 grid(static_cast<unsigned>(m), static_cast<unsigned>(s.chunks));
  bias_grad_partials<<<grid, kThreads, 0, stream>>>(dy, partial, n, m, plane, s.images_per_chunk);
  check_launch("conv bias-gradient kernel");
  if (s.chunks > 1) launch_sum_chunks(partial, db, m, s.chunks, stream);
}

}  // namespace dnnx::cuda
