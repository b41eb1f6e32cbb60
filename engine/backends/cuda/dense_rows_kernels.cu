#include <cfloat>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/dense_rows.h"

namespace dnnx::cuda {

namespace {

constexpr int kWarps = 8;
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

// Block (column tile blockIdx.x, row group blockIdx.y). Without the softmax a block's warps take
// one column each; with it, the single column tile is all N columns, the warps striding over
// them, and the values wait in shared memory [rows][N] for the row-wise softmax.
__global__ void dense_rows(const float* __restrict__ a, const float* __restrict__ b, const float* __restrict__ c,
                           float* __restrict__ y, DenseRows d) {
  extern __shared__ float row_values[];
  const bool softmax = d.epilogue == DenseEpilogue::Softmax;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row0 = blockIdx.y * kDenseRows;
  const int rows = min(kDenseRows, d.m - row0);
  const int first = softmax ? warp : blockIdx.x * kWarps + warp;
  const int end = softmax ? d.n : min(d.n, first + 1);
  for (int col = first; col < end; col += kWarps) {
    float acc[kDenseRows] = {};
#pragma unroll 4
    for (int kk = lane; kk < d.k; kk += 32) {
      const float bv = d.trans_b ? b[static_cast<int64_t>(col) * d.k + kk] : b[static_cast<int64_t>(kk) * d.n + col];
#pragma unroll
      for (int r = 0; r < kDenseRows; ++r) {
        if (r >= rows) break;
        const int64_t row = row0 + r;
        const float av = d.trans_a ? a[static_cast<int64_t>(kk) * d.m + row] : a[row * d.k + kk];
        acc[r] = fmaf(av, bv, acc[r]);
      }
    }
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
  dense_rows<<<grid, kWarps * 32, shared, stream>>>(a, b, c, y, d);
  check_launch("dense rows kernel");
}

}  // namespace dnnx::cuda
