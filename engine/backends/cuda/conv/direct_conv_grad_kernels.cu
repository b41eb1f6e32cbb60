// The direct conv gradients of direct_conv_grad.h (Note [direct conv gradients] there).
#include <algorithm>

#include "backends/cuda/conv/direct_conv_grad.h"
#include "backends/cuda/runtime/cuda_check.h"

namespace dnnx::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kFilterTile = 8;          // filters per dW block: two float4 of dY per output position
constexpr int kMaxWeightsPerThread = 4;
constexpr int kMaxPositionGroups = 32;  // threads splitting one weight's output positions
constexpr int kStripPixels = 4;         // adjacent input pixels per dX thread
constexpr int kChannelGroup = 4;        // input channels per dX thread (one float4 of W)
constexpr size_t kSharedBytes = 44 << 10;  // under the 48 KiB a block gets without opting in
constexpr int64_t kTargetBlocks = 528;     // about four dW blocks per SM of an H100/H200
constexpr int64_t kMaxWeights = 64 << 10;
constexpr size_t kMaxDataGradFilterBytes = 128 << 10;

size_t align256(size_t n) { return (n + 255) / 256 * 256; }

int64_t weights_per_filter(const DirectConvGrad2d& g) { return int64_t{g.c} * g.kh * g.kw; }

// --- dW ---------------------------------------------------------------------------------------

// How the filter gradient splits: threads over the weights (c, ky, kx) of a filter, `per_thread`
// each, and `groups` of such threads over the output positions; blocks over chunks of images
// and tiles of kFilterTile filters.
struct FilterGradSplit {
  int per_thread = 1;
  int slots = 0;   // threads over the weights: ceil(weights / per_thread)
  int groups = 1;  // groups of `slots` threads splitting the positions (only when per_thread is 1)
  int tiles = 0;   // filter tiles
  int64_t images_per_chunk = 0, chunks = 0;
};

FilterGradSplit filter_grad_split(const DirectConvGrad2d& g) {
  FilterGradSplit s;
  const int64_t q = weights_per_filter(g);
  s.per_thread = q <= kThreads ? 1 : q <= 2 * kThreads ? 2 : kMaxWeightsPerThread;
  s.slots = static_cast<int>((q + s.per_thread - 1) / s.per_thread);
  s.groups = std::max(1, std::min(kMaxPositionGroups, kThreads / s.slots));
  s.tiles = (g.m + kFilterTile - 1) / kFilterTile;
  const int64_t want = std::max<int64_t>(1, std::min<int64_t>(g.n, (kTargetBlocks + s.tiles - 1) / s.tiles));
  s.images_per_chunk = (g.n + want - 1) / want;
  s.chunks = (g.n + s.images_per_chunk - 1) / s.images_per_chunk;
  return s;
}

// [plane, kFilterTile] of dY and [C, H, W] of X while summing; [groups, slots, kFilterTile] partial
// sums after.
size_t filter_grad_shared(const DirectConvGrad2d& g, const FilterGradSplit& s) {
  const size_t load = (size_t{1} * g.oh * g.ow * kFilterTile + size_t{1} * g.c * g.h * g.w) * sizeof(float);
  const size_t reduce = s.groups > 1 ? size_t{1} * s.groups * s.slots * kFilterTile * sizeof(float) : 0;
  return std::max(load, reduce);
}

// partial [chunks, M, C*KH*KW]: one block per (chunk of images, tile of kFilterTile filters).
template <int kPerThread>
__global__ void __launch_bounds__(kThreads)
    filter_grad_partials(const float* __restrict__ x, const float* __restrict__ dy, float* __restrict__ partial,
                         DirectConvGrad2d g, int slots, int groups, int64_t images_per_chunk) {
  extern __shared__ float4 smem4[];
  float* smem = reinterpret_cast<float*>(smem4);
  const int plane = g.oh * g.ow, taps = g.kh * g.kw, in_plane = g.h * g.w;
  const int q_count = g.c * taps;
  float* dys = smem;                       // [plane, kFilterTile]: float4 pairs smem4[2p], smem4[2p + 1]
  float* xs = smem + plane * kFilterTile;  // [C, H, W]
  const int64_t chunk = blockIdx.x;
  const int m0 = blockIdx.y * kFilterTile;
  const int64_t first = chunk * images_per_chunk, last = min(g.n, first + images_per_chunk);
  const int slot = threadIdx.x % slots, group = threadIdx.x / slots;
  const bool active = group < groups;

  int x_offset[kPerThread], y_tap[kPerThread], x_tap[kPerThread];
  bool has[kPerThread];
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    const int q = slot + k * slots;
    has[k] = active && q < q_count;
    const int qq = has[k] ? q : 0;
    const int c = qq / taps, r = qq - c * taps, ky = r / g.kw, kx = r - ky * g.kw;
    x_offset[k] = c * in_plane;
    y_tap[k] = ky * g.dh;
    x_tap[k] = kx * g.dw;
  }
  float acc[kPerThread][kFilterTile] = {};

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
    for (int p = group; p < plane; p += groups) {
      const int oy = p / g.ow, ox = p - oy * g.ow;
      const int iy0 = oy * g.sh - g.ph, ix0 = ox * g.sw - g.pw;
      const float4 d0 = smem4[2 * p], d1 = smem4[2 * p + 1];
#pragma unroll
      for (int k = 0; k < kPerThread; ++k) {
        const int iy = iy0 + y_tap[k], ix = ix0 + x_tap[k];
        if (!has[k] || iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;  // padding: a zero term
        const float v = xs[x_offset[k] + iy * g.w + ix];
        acc[k][0] = fmaf(v, d0.x, acc[k][0]);
        acc[k][1] = fmaf(v, d0.y, acc[k][1]);
        acc[k][2] = fmaf(v, d0.z, acc[k][2]);
        acc[k][3] = fmaf(v, d0.w, acc[k][3]);
        acc[k][4] = fmaf(v, d1.x, acc[k][4]);
        acc[k][5] = fmaf(v, d1.y, acc[k][5]);
        acc[k][6] = fmaf(v, d1.z, acc[k][6]);
        acc[k][7] = fmaf(v, d1.w, acc[k][7]);
      }
    }
  }

  float* out = partial + chunk * g.m * q_count;
  if (groups == 1) {
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      if (!has[k]) continue;
#pragma unroll
      for (int f = 0; f < kFilterTile; ++f) {
        if (m0 + f < g.m) out[(m0 + f) * q_count + slot + k * slots] = acc[k][f];
      }
    }
    return;
  }
  // Several groups (per_thread is then 1, and slot is the weight): their sums added in group order.
  __syncthreads();  // every thread is done with the planes: the memory now holds the partial sums
  float* sums = smem;  // [groups, slots, kFilterTile]
  if (active) {
#pragma unroll
    for (int f = 0; f < kFilterTile; ++f) sums[(group * slots + slot) * kFilterTile + f] = acc[0][f];
  }
  __syncthreads();
  for (int i = threadIdx.x; i < slots * kFilterTile; i += kThreads) {
    const int q = i / kFilterTile, f = i - q * kFilterTile;
    if (q >= q_count || m0 + f >= g.m) continue;
    float sum = 0.0f;
    for (int k = 0; k < groups; ++k) sum += sums[(k * slots + q) * kFilterTile + f];
    out[(m0 + f) * q_count + q] = sum;
  }
}

// dw[i] = the chunks' partial[., i] summed in chunk order.
__global__ void sum_chunks(const float* __restrict__ partial, float* __restrict__ dw, int64_t count, int64_t chunks) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i >= count) return;
  float sum = 0.0f;
  for (int64_t c = 0; c < chunks; ++c) sum += partial[c * count + i];
  dw[i] = sum;
}

// --- dX ---------------------------------------------------------------------------------------

int channel_groups(const DirectConvGrad2d& g) { return (g.c + kChannelGroup - 1) / kChannelGroup; }
// A dY row in shared memory: KW - 1 zeros on each side, and kStripPixels - 1 more on the right
// for the last strip's pixels past the row.
int padded_row(const DirectConvGrad2d& g) { return g.ow + 2 * (g.kw - 1) + kStripPixels - 1; }
size_t data_grad_shared(const DirectConvGrad2d& g) { return size_t{1} * g.m * g.oh * padded_row(g) * sizeof(float); }
size_t transposed_filter_bytes(const DirectConvGrad2d& g) {
  return size_t{1} * g.m * g.kh * g.kw * channel_groups(g) * kChannelGroup * sizeof(float);
}

// wt [M, KH, KW, C4] (C4: C rounded up to kChannelGroup, the extra channels zero) from w [M, C, KH, KW].
__global__ void transpose_filter(const float* __restrict__ w, float* __restrict__ wt, DirectConvGrad2d g, int c4) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  const int taps = g.kh * g.kw;
  if (i >= int64_t{g.m} * taps * c4) return;
  const int c = static_cast<int>(i % c4);
  const int64_t filter_tap = i / c4;  // m * taps + tap
  const int64_t m = filter_tap / taps, tap = filter_tap - m * taps;
  wt[i] = c < g.c ? w[(m * g.c + c) * taps + tap] : 0.0f;
}

// One block per image: its dY planes in shared memory, rows zero-padded; each thread
// kStripPixels adjacent pixels of one input row for kChannelGroup channels, summed over the
// filters m, then the taps ky, kx whose output lies inside dY (stride 1, dilation 1).
template <int KW>
__global__ void __launch_bounds__(kThreads)
    data_grad(const float4* __restrict__ wt, const float* __restrict__ dy, float* __restrict__ dx, DirectConvGrad2d g) {
  extern __shared__ float4 smem4[];
  float* dys = reinterpret_cast<float*>(smem4);  // [M, OH, row]
  const int row = g.ow + 2 * (KW - 1) + kStripPixels - 1;
  const int64_t image = blockIdx.x;
  const float* dyi = dy + image * g.m * g.oh * g.ow;
  const int area = g.m * g.oh * row;
  for (int i = threadIdx.x; i < area; i += kThreads) {
    const int jx = i % row, plane_row = i / row;  // plane_row = m * OH + oy
    const int ox = jx - (KW - 1);
    dys[i] = ox >= 0 && ox < g.ow ? dyi[plane_row * g.ow + ox] : 0.0f;
  }
  __syncthreads();
  const int groups = (g.c + kChannelGroup - 1) / kChannelGroup;
  const int strips = (g.w + kStripPixels - 1) / kStripPixels;
  const int items = groups * g.h * strips;
  for (int item = threadIdx.x; item < items; item += kThreads) {
    const int strip = item % strips, rest = item / strips;
    const int iy = rest % g.h, group = rest / g.h;
    const int ix0 = strip * kStripPixels;
    float4 acc[kStripPixels];
#pragma unroll
    for (int j = 0; j < kStripPixels; ++j) acc[j] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    // Pixel ix0 + j, tap kx reads dY column ix0 + j + pw - kx: padded column r[j + KW - 1 - kx]
    // of the row from ix0 + pw on.
    for (int m = 0; m < g.m; ++m) {
      for (int ky = 0; ky < g.kh; ++ky) {
        const int oy = iy + g.ph - ky;
        if (oy < 0 || oy >= g.oh) continue;
        const float* src = dys + (m * g.oh + oy) * row + ix0 + g.pw;
        float r[KW + kStripPixels - 1];
#pragma unroll
        for (int t = 0; t < KW + kStripPixels - 1; ++t) r[t] = src[t];
        const float4* wk = wt + (m * g.kh + ky) * KW * groups + group;
#pragma unroll
        for (int kx = 0; kx < KW; ++kx) {
          const float4 wv = __ldg(wk + kx * groups);
#pragma unroll
          for (int j = 0; j < kStripPixels; ++j) {
            const float v = r[j + KW - 1 - kx];
            acc[j].x = fmaf(v, wv.x, acc[j].x);
            acc[j].y = fmaf(v, wv.y, acc[j].y);
            acc[j].z = fmaf(v, wv.z, acc[j].z);
            acc[j].w = fmaf(v, wv.w, acc[j].w);
          }
        }
      }
    }
    const int64_t plane = int64_t{g.h} * g.w;
    float* out = dx + (image * g.c + group * kChannelGroup) * plane + iy * g.w;
#pragma unroll
    for (int j = 0; j < kStripPixels; ++j) {
      const int ix = ix0 + j;
      if (ix >= g.w) break;
      const float v[kChannelGroup] = {acc[j].x, acc[j].y, acc[j].z, acc[j].w};
#pragma unroll
      for (int k = 0; k < kChannelGroup; ++k) {
        if (group * kChannelGroup + k < g.c) out[k * plane + ix] = v[k];
      }
    }
  }
}

bool shape_is_valid(const DirectConvGrad2d& g) {
  return g.n > 0 && g.c > 0 && g.h > 0 && g.w > 0 && g.m > 0 && g.oh > 0 && g.ow > 0 && g.kh > 0 && g.kw > 0;
}

}  // namespace

bool direct_filter_grad_supported(const DirectConvGrad2d& g) {
  if (!shape_is_valid(g)) return false;
  const int64_t q = weights_per_filter(g);
  if (q > int64_t{kMaxWeightsPerThread} * kThreads || q * g.m > kMaxWeights) return false;
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
  switch (s.per_thread) {
    case 1:
      filter_grad_partials<1><<<grid, kThreads, shared, stream>>>(x, dy, partial, g, s.slots, s.groups,
                                                                  s.images_per_chunk);
      break;
    case 2:
      filter_grad_partials<2><<<grid, kThreads, shared, stream>>>(x, dy, partial, g, s.slots, s.groups,
                                                                  s.images_per_chunk);
      break;
    default:
      filter_grad_partials<kMaxWeightsPerThread><<<grid, kThreads, shared, stream>>>(x, dy, partial, g, s.slots,
                                                                                     s.groups, s.images_per_chunk);
  }
  check_launch("direct filter-gradient kernel");
  if (s.chunks > 1) {
    const int64_t count = g.m * weights_per_filter(g);
    sum_chunks<<<static_cast<unsigned>((count + kThreads - 1) / kThreads), kThreads, 0, stream>>>(partial, dw, count,
                                                                                                 s.chunks);
    check_launch("direct filter-gradient sum kernel");
  }
}

bool direct_data_grad_supported(const DirectConvGrad2d& g) {
  if (!shape_is_valid(g) || g.sh != 1 || g.sw != 1 || g.dh != 1 || g.dw != 1) return false;
  if (g.kh > 7 || (g.kw != 3 && g.kw != 5 && g.kw != 7)) return false;
  return transposed_filter_bytes(g) <= kMaxDataGradFilterBytes && data_grad_shared(g) <= kSharedBytes;
}

size_t direct_data_grad_workspace(const DirectConvGrad2d& g) { return align256(transposed_filter_bytes(g)); }

void launch_direct_data_grad(const float* w, const float* dy, float* dx, void* workspace, const DirectConvGrad2d& g,
                             cudaStream_t stream) {
  auto* wt = static_cast<float*>(workspace);
  const int c4 = channel_groups(g) * kChannelGroup;
  const int64_t count = int64_t{g.m} * g.kh * g.kw * c4;
  transpose_filter<<<static_cast<unsigned>((count + kThreads - 1) / kThreads), kThreads, 0, stream>>>(w, wt, g, c4);
  check_launch("direct data-gradient filter transpose kernel");
  const auto* wt4 = reinterpret_cast<const float4*>(wt);
  const dim3 grid(static_cast<unsigned>(g.n));
  const size_t shared = data_grad_shared(g);
  switch (g.kw) {
    case 3: data_grad<3><<<grid, kThreads, shared, stream>>>(wt4, dy, dx, g); break;
    case 5: data_grad<5><<<grid, kThreads, shared, stream>>>(wt4, dy, dx, g); break;
    default: data_grad<7><<<grid, kThreads, shared, stream>>>(wt4, dy, dx, g);
  }
  check_launch("direct data-gradient kernel");
}

}  // namespace dnnx::cuda
