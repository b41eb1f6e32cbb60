#include <cfloat>
#include <cstdint>

#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/dense/dense_rows.h"

namespace dnnx::cuda {

namespace {

constexpr int kWarps = 16;  // per block: columns computed at once
constexpr int kUnroll = 4;  // loads each lane has in flight per operand row: at batch 1 the time is
                            // the L2's latency, paid once per kUnroll loads instead of per load
constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kMaxRowGroups = 65535;  // gridDim.y

// The sum of `v` over the warp in a fixed order (a butterfly), lane 0's result in every lane (the
// lanes' own results may differ in the last bit: each adds in its own order).
__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(kFullMask, v, offset);
  return __shfl_sync(kFullMask, v, 0);
}

__device__ float warp_max(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(kFullMask, v, offset));
  return v;
}

// lane_dots for any layout (transA, transB) and any K, one float at a time.
__device__ void lane_dots_scalar(const float* __restrict__ a, const float* __restrict__ b, const DenseRows& d, int col,
                                 int row0, int rows, int lane, float (&acc)[kDenseRows]) {
  for (int k0 = lane; k0 < d.k; k0 += 32 * kUnroll) {
    float bv[kUnroll], av[kDenseRows][kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int k = k0 + 32 * u;
      const bool in = k < d.k;
      bv[u] = in ? __ldg(d.trans_b ? b + static_cast<int64_t>(col) * d.k + k : b + static_cast<int64_t>(k) * d.n + col)
                 : 0.0f;
#pragma unroll
      for (int r = 0; r < kDenseRows; ++r) {
        const int64_t row = row0 + r;
        av[r][u] = in && r < rows ? __ldg(d.trans_a ? a + static_cast<int64_t>(k) * d.m + row : a + row * d.k + k) : 0.0f;
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
      for (int r = 0; r < kDenseRows; ++r) acc[r] = fmaf(av[r][u], bv[u], acc[r]);
    }
  }
}

// This lane's part of the dot products of column `col` with rows [row0, row0 + rows): acc[r]
// gathers A[row0 + r, k] * B[k, col] over the lane's k. kVec: B stored [N,K] and A [M,K] (transB,
// no transA), K a multiple of 4 and both 16-byte aligned, read as float4.
template <bool kVec>
__device__ void lane_dots(const float* __restrict__ a, const float* __restrict__ b, const DenseRows& d, int col,
                          int row0, int rows, int lane, float (&acc)[kDenseRows]) {
  if constexpr (kVec) {
    const int k4 = d.k / 4;
    const float4* b4 = reinterpret_cast<const float4*>(b + static_cast<int64_t>(col) * d.k);
    const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int j0 = lane; j0 < k4; j0 += 32 * kUnroll) {
      float4 bv[kUnroll], av[kDenseRows][kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int j = j0 + 32 * u;
        bv[u] = j < k4 ? __ldg(b4 + j) : zero;
#pragma unroll
        for (int r = 0; r < kDenseRows; ++r) {
          const float4* a4 = reinterpret_cast<const float4*>(a + static_cast<int64_t>(row0 + r) * d.k);
          av[r][u] = r < rows && j < k4 ? __ldg(a4 + j) : zero;
        }
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
        for (int r = 0; r < kDenseRows; ++r) {
          acc[r] = fmaf(av[r][u].x, bv[u].x, acc[r]);
          acc[r] = fmaf(av[r][u].y, bv[u].y, acc[r]);
          acc[r] = fmaf(av[r][u].z, bv[u].z, acc[r]);
          acc[r] = fmaf(av[r][u].w, bv[u].w, acc[r]);
        }
      }
    }
  } else {
    lane_dots_scalar(a, b, d, col, row0, rows, lane, acc);
  }
}

// Block (column tile blockIdx.x, row group blockIdx.y). Without the softmax a block's warps take
// one column each; with it, the single column tile is all N columns, the warps striding over
// them, and the values wait in shared memory [rows][N] for the row-wise softmax.
template <bool kVec>
__global__ void __launch_bounds__(kWarps * 32) dense_rows(const float* __restrict__ a, const float* __restrict__ b,
                                                           const float* __restrict__ c, float* __restrict__ y,
                                                           DenseRows d) {
  extern __shared__ float row_values[];
  const bool softmax = d.epilogue == DenseEpilogue::Softmax;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row0 = blockIdx.y * kDenseRows;
  const int rows = min(kDenseRows, d.m - row0);
  const int first = softmax ? warp : blockIdx.x * kWarps + warp;
  const int end = softmax ? d.n : min(d.n, first + 1);
  for (int col = first; col < end; col += kWarps) {
    float acc[kDenseRows] = {};
    lane_dots<kVec>(a, b, d, col, row0, rows, lane, acc);
#pragma unroll
    for (int r = 0; r < kDenseRows; ++r) {
      if (r >= rows) break;
      float v = d.alpha * warp_sum(acc[r]);
      const int64_t row = row0 + r;
      if (c) v = fmaf(d.beta, c[row * d.c_row_stride + col * d.c_col_stride], v);
      if (d.epilogue == DenseEpilogue::Relu) v = fmaxf(v, 0.0f);
      if (lane == 0) {
        if (softmax) row_values[r * d.n + col] = v;
        else y[row * d.n + col] = v;
      }
    }
  }
  if (!softmax) return;
  __syncthreads();
  for (int r = warp; r < rows; r += kWarps) {
    const float* v = row_values + r * d.n;
    float top = -FLT_MAX;
    for (int col = lane; col < d.n; col += 32) top = fmaxf(top, v[col]);
    top = warp_max(top);
    float sum = 0.0f;
    for (int col = lane; col < d.n; col += 32) sum += expf(v[col] - top);
    sum = warp_sum(sum);
    float* out = y + static_cast<int64_t>(row0 + r) * d.n;
    for (int col = lane; col < d.n; col += 32) out[col] = expf(v[col] - top) / sum;
  }
}

int row_groups(const DenseRows& d) { return (d.m + kDenseRows - 1) / kDenseRows; }

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

bool dense_rows_supported(const DenseRows& d) {
  if (d.m <= 0 || d.n <= 0 || d.k < 0) return false;
  if (row_groups(d) > kMaxRowGroups) return false;
  return d.epilogue != DenseEpilogue::Softmax || d.n <= kDenseSoftmaxMaxCols;
}

void launch_dense_rows(const float* a, const float* b, const float* c, float* y, const DenseRows& d,
                       cudaStream_t stream) {
  const bool softmax = d.epilogue == DenseEpilogue::Softmax;
  const dim3 grid(softmax ? 1u : static_cast<unsigned>((d.n + kWarps - 1) / kWarps), static_cast<unsigned>(row_groups(d)));
  const size_t shared = softmax ? sizeof(float) * kDenseRows * d.n : 0;
  const bool vec = d.trans_b && !d.trans_a && d.k % 4 == 0 && aligned16(a) && aligned16(b);
  if (vec) {
    dense_rows<true><<<grid, kWarps * 32, shared, stream>>>(a, b, c, y, d);
  } else {
    dense_rows<false><<<grid, kWarps * 32, shared, stream>>>(a, b, c, y, d);
  }
  check_launch("dense rows kernel");
}

}  // namespace dnnx::cuda
