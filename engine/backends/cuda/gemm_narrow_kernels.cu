// The narrow Gemm kernels (gemm_narrow.h): Gemm with at most kNarrowColumns output columns, fp32.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/gemm_narrow.h"
#include "backends/cuda/launch.cuh"

namespace dnnx::cuda {

namespace {

constexpr int kRowsPerBlock = 8;  // forward: one warp per row of Y
constexpr int kColTile = 32;      // dB: columns of A per block (one per lane) ...
constexpr int kRowGroups = 8;     // ... and the warps that split the rows between them

// op(B)[kk, j]: B [n, k] when transposed, else [k, n].
__device__ __forceinline__ float op_b(const NarrowGemm& g, const float* __restrict__ b, int kk, int j) {
  return g.trans_b ? __ldg(b + static_cast<int64_t>(j) * g.k + kk) : __ldg(b + static_cast<int64_t>(kk) * g.n + j);
}

// Block: kRowsPerBlock warps, warp w computes row blockIdx.x * kRowsPerBlock + w of Y.
__global__ void narrow_gemm_kernel(NarrowGemm g, const float* __restrict__ a, const float* __restrict__ b,
                                   const float* __restrict__ c, bool relu, float* __restrict__ y) {
  const int lane = threadIdx.x % 32;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
  if (row >= g.m) return;  // the whole warp: `row` is the same for its lanes
  float acc[kNarrowColumns];
#pragma unroll
  for (int j = 0; j < kNarrowColumns; ++j) acc[j] = 0.0f;
  const float* a_row = a + row * g.k;
  for (int kk = lane; kk < g.k; kk += 32) {
    const float av = __ldg(a_row + kk);
#pragma unroll
    for (int j = 0; j < kNarrowColumns; ++j) {
      if (j < g.n) acc[j] = fmaf(av, op_b(g, b, kk, j), acc[j]);
    }
  }
  // Each column's 32 partial sums, summed across the warp (every lane ends with every sum);
  // lane j keeps column j's (a fixed register per j: no dynamic indexing into acc).
  float mine = 0.0f;
#pragma unroll
  for (int j = 0; j < kNarrowColumns; ++j) {
    if (j < g.n) {  // g.n is the same for every lane: the shuffles see the whole warp
      float v = acc[j];
      for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
      if (lane == j) mine = v;
    }
  }
  if (lane < g.n) {
    float v = g.alpha * mine;
    if (c) v += g.beta * c[lane];
    y[row * g.n + lane] = relu ? fmaxf(v, 0.0f) : v;
  }
}

// dA[row, kk] = alpha * sum_j dY[row, j] op(B)[kk, j], one thread per element (grid-stride).
__global__ void narrow_gemm_da_kernel(NarrowGemm g, const float* __restrict__ dy, const float* __restrict__ b,
                                      float* __restrict__ da) {
  const int64_t total = static_cast<int64_t>(g.m) * g.k;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = i / g.k;
    const int kk = static_cast<int>(i % g.k);
    const float* dy_row = dy + row * g.n;
    float s = 0.0f;
    for (int j = 0; j < g.n; ++j) s = fmaf(__ldg(dy_row + j), op_b(g, b, kk, j), s);
    da[i] = g.alpha * s;
  }
}

// Block (kColTile, kRowGroups): thread (x, y) sums rows y, y + kRowGroups, ... of column
// first_col + blockIdx.x * kColTile + x of [A | 1] against each column of dY; the kRowGroups
// partial sums are then added in a fixed order. Column k (the ones) gives dc.
__global__ void narrow_gemm_db_dc_kernel(NarrowGemm g, const float* __restrict__ a, const float* __restrict__ dy,
                                         float* __restrict__ db, float* __restrict__ dc, int first_col, int end_col) {
  __shared__ float part[kRowGroups][kNarrowColumns][kColTile + 1];
  const int x = threadIdx.x, y = threadIdx.y;
  const int col = first_col + blockIdx.x * kColTile + x;
  const bool active = col < end_col;
  const bool ones = col == g.k;
  float acc[kNarrowColumns];
#pragma unroll
  for (int j = 0; j < kNarrowColumns; ++j) acc[j] = 0.0f;
  if (active) {
    for (int64_t row = y; row < g.m; row += kRowGroups) {
      const float av = ones ? 1.0f : __ldg(a + row * g.k + col);
      const float* dy_row = dy + row * g.n;
#pragma unroll
      for (int j = 0; j < kNarrowColumns; ++j) {
        if (j < g.n) acc[j] = fmaf(av, __ldg(dy_row + j), acc[j]);
      }
    }
  }
#pragma unroll
  for (int j = 0; j < kNarrowColumns; ++j) part[y][j][x] = acc[j];
  __syncthreads();
  if (y != 0 || !active) return;
  for (int j = 0; j < g.n; ++j) {
    float s = part[0][j][x];
    for (int r = 1; r < kRowGroups; ++r) s += part[r][j][x];
    if (ones) {
      dc[j] = g.beta * s;
    } else if (g.trans_b) {
      db[static_cast<int64_t>(j) * g.k + col] = g.alpha * s;
    } else {
      db[static_cast<int64_t>(col) * g.n + j] = g.alpha * s;
    }
  }
}

}  // namespace

void launch_narrow_gemm(const NarrowGemm& g, const float* a, const float* b, const float* c, bool relu, float* y,
                        cudaStream_t stream) {
  if (g.m == 0) return;
  const unsigned blocks = static_cast<unsigned>((static_cast<int64_t>(g.m) + kRowsPerBlock - 1) / kRowsPerBlock);
  narrow_gemm_kernel<<<blocks, 32 * kRowsPerBlock, 0, stream>>>(g, a, b, c, relu, y);
  check_launch("narrow gemm");
}

void launch_narrow_gemm_da(const NarrowGemm& g, const float* dy, const float* b, float* da, cudaStream_t stream) {
  const int64_t total = static_cast<int64_t>(g.m) * g.k;
  if (total == 0) return;
  narrow_gemm_da_kernel<<<grid_for(total), kBlock, 0, stream>>>(g, dy, b, da);
  check_launch("narrow gemm dA");
}

void launch_narrow_gemm_db_dc(const NarrowGemm& g, const float* a, const float* dy, float* db, float* dc,
                              cudaStream_t stream) {
  const int first_col = db ? 0 : g.k;
  const int end_col = g.k + (dc ? 1 : 0);
  if (end_col <= first_col) return;
  const unsigned blocks = static_cast<unsigned>((end_col - first_col + kColTile - 1) / kColTile);
  narrow_gemm_db_dc_kernel<<<blocks, dim3(kColTile, kRowGroups), 0, stream>>>(g, a, dy, db, dc, first_col, end_col);
  check_launch("narrow gemm dB");
}

}  // namespace dnnx::cuda
