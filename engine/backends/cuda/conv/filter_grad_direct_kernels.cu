// The direct filter gradient (filter_grad_direct.h, Note [direct filter gradient]).
#include <algorithm>
#include <climits>

#include "backends/cuda/conv/filter_grad_direct.h"
#include "backends/cuda/runtime/cuda_check.h"

namespace dnnx::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int64_t kTargetBlocks = 512;     // about four per SM of an H200: fixed, so the sums' order is too
constexpr int64_t kMinOutputsPerChunk = 1024;

int taps_of(const DirectFilterGrad& s) { return s.c * s.kh * s.kw; }

// The chunks the N*OH*OW outputs are cut into: from the shape alone (determinism).
int64_t chunks_of(const DirectFilterGrad& s) {
  const int64_t outputs = s.n * s.oh * s.ow;
  const int64_t by_blocks = (kTargetBlocks + s.m - 1) / s.m;
  const int64_t by_size = (outputs + kMinOutputsPerChunk - 1) / kMinOutputsPerChunk;
  return std::max<int64_t>(1, std::min({by_blocks, by_size, int64_t{65535}}));
}

// Block (filter f, chunk k): partial[(f * chunks + k) * (taps + 1) + t] = sum over the chunk's
// outputs o of dy[o] * x[tap t of o] (t < taps), and of dy[o] (t == taps: the bias).
// kCap >= taps: the accumulators are registers (indices known at compile time).
template <int kCap>
__global__ void __launch_bounds__(kThreads) filter_grad_partials(const float* __restrict__ x,
                                                                 const float* __restrict__ dy,
                                                                 float* __restrict__ partial, DirectFilterGrad s,
                                                                 int taps, int64_t per_chunk) {
  __shared__ int tap_c[kCap], tap_y[kCap], tap_x[kCap];  // each tap's channel and offsets
  __shared__ float sums[kWarps][kCap + 1];
  for (int t = threadIdx.x; t < kCap; t += kThreads) {
    const int window = s.kh * s.kw;
    const int c = t / window, r = (t % window) / s.kw, q = t % s.kw;
    tap_c[t] = t < taps ? c : 0;
    tap_y[t] = r * s.dh;
    tap_x[t] = q * s.dw;
  }
  __syncthreads();
  const int f = blockIdx.x;
  const int64_t chunks = gridDim.y, chunk = blockIdx.y;
  const int64_t plane = int64_t{s.oh} * s.ow, in_plane = int64_t{s.h} * s.w;
  const int64_t begin = chunk * per_chunk, end = min(s.n * plane, begin + per_chunk);
  float acc[kCap + 1];
#pragma unroll
  for (int t = 0; t <= kCap; ++t) acc[t] = 0.0f;
  for (int64_t o = begin + threadIdx.x; o < end; o += kThreads) {
    const int64_t n = o / plane;
    const int p = static_cast<int>(o - n * plane), oy = p / s.ow, ox = p - oy * s.ow;
    const float g = dy[(n * s.m + f) * plane + p];
    const float* xn = x + n * s.c * in_plane;
    const int y0 = oy * s.sh - s.ph, x0 = ox * s.sw - s.pw;
#pragma unroll
    for (int t = 0; t < kCap; ++t) {
      if (t < taps) {
        const int iy = y0 + tap_y[t], ix = x0 + tap_x[t];
        if (iy >= 0 && iy < s.h && ix >= 0 && ix < s.w) acc[t] = fmaf(g, xn[tap_c[t] * in_plane + iy * s.w + ix], acc[t]);
      }
    }
    acc[kCap] += g;
  }
  // Warp sums (a fixed shuffle tree), then the warps' sums in warp order.
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
  for (int t = 0; t <= kCap; ++t) {
    float v = acc[t];
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (lane == 0) sums[warp][t] = v;
  }
  __syncthreads();
  for (int t = threadIdx.x; t <= taps; t += kThreads) {
    const int slot = t == taps ? kCap : t;
    float v = 0.0f;
    for (int k = 0; k < kWarps; ++k) v += sums[k][slot];
    partial[(f * chunks + chunk) * (taps + 1) + t] = v;
  }
}

// dw[f * taps + t] (and db[f]) = the chunks' partial sums, in chunk order.
__global__ void filter_grad_sum(const float* __restrict__ partial, float* __restrict__ dw, float* __restrict__ db,
                                int m, int taps, int64_t chunks) {
  const int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= int64_t{m} * (taps + 1)) return;
  const int f = static_cast<int>(i / (taps + 1)), t = static_cast<int>(i % (taps + 1));
  const float* p = partial + f * chunks * (taps + 1) + t;
  float v = 0.0f;
  for (int64_t k = 0; k < chunks; ++k) v += p[k * (taps + 1)];
  if (t < taps) dw[f * taps + t] = v;
  else if (db) db[f] = v;
}

template <int kCap>
void launch_partials(const float* x, const float* dy, float* partial, const DirectFilterGrad& s, int64_t chunks,
                     cudaStream_t stream) {
  const int64_t outputs = s.n * s.oh * s.ow;
  const int64_t per_chunk = (outputs + chunks - 1) / chunks;
  const dim3 grid(static_cast<unsigned>(s.m), static_cast<unsigned>(chunks));
  filter_grad_partials<kCap><<<grid, kThreads, 0, stream>>>(x, dy, partial, s, taps_of(s), per_chunk);
}

}  // namespace

bool direct_filter_grad_supported(const DirectFilterGrad& s) {
  const int taps = taps_of(s);
  return s.c >= 1 && s.c <= kDirectFilterGradMaxChannels && taps >= 1 && taps <= kDirectFilterGradMaxTaps &&
         s.m >= 1 && s.m <= 65535 && s.n >= 1 && s.n * s.c * int64_t{s.h} * s.w < INT_MAX &&
         s.n * s.m * int64_t{s.oh} * s.ow < INT_MAX;
}

size_t direct_filter_grad_workspace(const DirectFilterGrad& s) {
  const size_t bytes = static_cast<size_t>(s.m) * chunks_of(s) * (taps_of(s) + 1) * sizeof(float);
  return (bytes + 255) / 256 * 256;
}

void launch_direct_filter_grad(const float* x, const float* dy, float* dw, float* db, void* workspace,
                               const DirectFilterGrad& s, cudaStream_t stream) {
  auto* partial = static_cast<float*>(workspace);
  const int taps = taps_of(s);
  const int64_t chunks = chunks_of(s);
  if (taps <= 16) {
    launch_partials<16>(x, dy, partial, s, chunks, stream);
  } else if (taps <= 32) {
    launch_partials<32>(x, dy, partial, s, chunks, stream);
  } else {
    launch_partials<64>(x, dy, partial, s, chunks, stream);
  }
  check_launch("direct filter gradient kernel (partial sums)");
  const int64_t sums = int64_t{s.m} * (taps + 1);
  filter_grad_sum<<<static_cast<unsigned>((sums + 127) / 128), 128, 0, stream>>>(partial, dw, db, s.m, taps, chunks);
  check_launch("direct filter gradient kernel (sums)");
}

}  // namespace dnnx::cuda
