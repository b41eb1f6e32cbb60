// The direct filter gradient (filter_grad_direct.h, Note [direct filter gradient]).
#include <algorithm>
#include <climits>

#include "backends/cuda/conv/filter_grad_direct.h"
#include "backends/cuda/runtime/cuda_check.h"

namespace dnnx::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kTile = 32;                 // outputs per shared-memory tile
constexpr int kRow = kTile + 1;           // a tile row's stride: threads of consecutive taps hit other banks
constexpr int kMaxPairs = 8;              // (filter, tap) sums per thread: M * (taps + 1) <= 8 * 256
constexpr int64_t kTargetChunks = 512;    // about four blocks per SM of an H200: fixed, so the sums' order is too

int taps_of(const DirectFilterGrad& s) { return s.c * s.kh * s.kw; }
int64_t pairs_of(const DirectFilterGrad& s) { return int64_t{s.m} * (taps_of(s) + 1); }

// The chunks the N*OH*OW outputs are cut into: from the shape alone (determinism).
int64_t chunks_of(const DirectFilterGrad& s) {
  const int64_t tiles = (s.n * s.oh * s.ow + kTile - 1) / kTile;
  return std::max<int64_t>(1, std::min(tiles, kTargetChunks));
}

// dW [M, T] (and dB) as a GEMM over the outputs o: dW[f, t] = sum_o dy[f, o] * col[t, o], col[t, o]
// being tap t's input for output o (0 in the padding), and dB[f] = sum_o dy[f, o] (tap T, of ones).
// Block k sums its chunk of outputs tile by tile: the tile's dy [M, kTile] and col [T, kTile] in
// shared memory, then each thread its (f, t) pairs (pair = f * (T + 1) + t, stride kThreads) in
// double, in output order: partial[(k * M * (T + 1)) + pair].
__global__ void __launch_bounds__(kThreads) filter_grad_partials(const float* __restrict__ x,
                                                                 const float* __restrict__ dy,
                                                                 double* __restrict__ partial, DirectFilterGrad s,
                                                                 int64_t per_chunk) {
  extern __shared__ float tile[];
  const int taps = s.c * s.kh * s.kw, window = s.kh * s.kw;
  float* dy_tile = tile;                  // [M][kRow]
  float* col_tile = tile + s.m * kRow;    // [taps][kRow]
  const int64_t plane = int64_t{s.oh} * s.ow, in_plane = int64_t{s.h} * s.w, outputs = s.n * plane;
  const int64_t begin = blockIdx.x * per_chunk, end = min(outputs, begin + per_chunk);
  const int pairs = s.m * (taps + 1);
  double acc[kMaxPairs];
#pragma unroll
  for (int i = 0; i < kMaxPairs; ++i) acc[i] = 0.0;
  for (int64_t first = begin; first < end; first += kTile) {
    const int count = static_cast<int>(min(int64_t{kTile}, end - first));
    for (int e = threadIdx.x; e < s.m * kTile; e += kThreads) {
      const int f = e / kTile, j = e - f * kTile;
      float v = 0.0f;
      if (j < count) {
        const int64_t o = first + j, n = o / plane;
        v = dy[(n * s.m + f) * plane + (o - n * plane)];
      }
      dy_tile[f * kRow + j] = v;
    }
    for (int e = threadIdx.x; e < taps * kTile; e += kThreads) {
      const int t = e / kTile, j = e - t * kTile;
      float v = 0.0f;
      if (j < count) {
        const int64_t o = first + j, n = o / plane;
        const int p = static_cast<int>(o - n * plane), oy = p / s.ow, ox = p - oy * s.ow;
        const int c = t / window, r = (t - c * window) / s.kw, q = t - c * window - r * s.kw;
        const int iy = oy * s.sh - s.ph + r * s.dh, ix = ox * s.sw - s.pw + q * s.dw;
        if (iy >= 0 && iy < s.h && ix >= 0 && ix < s.w) v = x[(n * s.c + c) * in_plane + int64_t{iy} * s.w + ix];
      }
      col_tile[t * kRow + j] = v;
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kMaxPairs; ++i) {
      const int pair = threadIdx.x + i * kThreads;
      if (pair < pairs) {
        const int f = pair / (taps + 1), t = pair - f * (taps + 1);
        const float* g = dy_tile + f * kRow;
        double sum = 0.0;
        if (t < taps) {
          const float* v = col_tile + t * kRow;
          for (int j = 0; j < count; ++j) sum = fma(static_cast<double>(g[j]), static_cast<double>(v[j]), sum);
        } else {
          for (int j = 0; j < count; ++j) sum += static_cast<double>(g[j]);
        }
        acc[i] += sum;
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kMaxPairs; ++i) {
    const int pair = threadIdx.x + i * kThreads;
    if (pair < pairs) partial[blockIdx.x * int64_t{pairs} + pair] = acc[i];
  }
}

// dw[f * taps + t] (and db[f]) = the chunks' partial sums, in chunk order, rounded once to float.
__global__ void filter_grad_sum(const double* __restrict__ partial, float* __restrict__ dw, float* __restrict__ db,
                                int m, int taps, int64_t chunks) {
  const int64_t pairs = int64_t{m} * (taps + 1);
  const int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= pairs) return;
  const int f = static_cast<int>(i / (taps + 1)), t = static_cast<int>(i % (taps + 1));
  double v = 0.0;
  for (int64_t k = 0; k < chunks; ++k) v += partial[k * pairs + i];
  if (t < taps) dw[f * taps + t] = static_cast<float>(v);
  else if (db) db[f] = static_cast<float>(v);
}

size_t tile_bytes(const DirectFilterGrad& s) { return static_cast<size_t>(s.m + taps_of(s)) * kRow * sizeof(float); }

}  // namespace

bool direct_filter_grad_supported(const DirectFilterGrad& s) {
  const int taps = taps_of(s);
  return s.c >= 1 && s.c <= kDirectFilterGradMaxChannels && taps >= 1 && taps <= kDirectFilterGradMaxTaps &&
         s.m >= 1 && pairs_of(s) <= int64_t{kMaxPairs} * kThreads && s.n >= 1 &&
         s.n * s.c * int64_t{s.h} * s.w < INT_MAX && s.n * s.m * int64_t{s.oh} * s.ow < INT_MAX &&
         tile_bytes(s) <= (48 << 10);
}

size_t direct_filter_grad_workspace(const DirectFilterGrad& s) {
  const size_t bytes = static_cast<size_t>(chunks_of(s)) * pairs_of(s) * sizeof(double);
  return (bytes + 255) / 256 * 256;
}

void launch_direct_filter_grad(const float* x, const float* dy, float* dw, float* db, void* workspace,
                               const DirectFilterGrad& s, cudaStream_t stream) {
  auto* partial = static_cast<double*>(workspace);
  const int64_t chunks = chunks_of(s), outputs = s.n * s.oh * s.ow;
  // whole tiles per chunk, so that the order of every sum follows from the shape alone
  const int64_t per_chunk = ((outputs + chunks - 1) / chunks + kTile - 1) / kTile * kTile;
  filter_grad_partials<<<static_cast<unsigned>(chunks), kThreads, tile_bytes(s), stream>>>(x, dy, partial, s, per_chunk);
  check_launch("direct filter gradient kernel (partial sums)");
  const int64_t pairs = pairs_of(s);
  filter_grad_sum<<<static_cast<unsigned>((pairs + 127) / 128), 128, 0, stream>>>(partial, dw, db, s.m, taps_of(s),
                                                                                   chunks);
  check_launch("direct filter gradient kernel (sums)");
}

}  // namespace dnnx::cuda
