#include <algorithm>

#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/dense/dense_grad_kernels.h"

namespace dnnx::cuda {

namespace {

constexpr int kSumThreads = 256;

__global__ void broadcast_sum_kernel(const float* dy, float* dc, int64_t rows, int64_t cols, int64_t c_rows,
                                     int64_t c_cols, float beta) {
  const int64_t ci = blockIdx.x / c_cols, cj = blockIdx.x % c_cols;
  // The region of Y that read C[ci, cj].
  const int64_t r_count = c_rows == 1 ? rows : 1, r0 = c_rows == 1 ? 0 : ci;
  const int64_t c_count = c_cols == 1 ? cols : 1, c0 = c_cols == 1 ? 0 : cj;
  const int64_t total = r_count * c_count;
  float sum = 0.0f;
  for (int64_t e = threadIdx.x; e < total; e += blockDim.x) {
    sum += dy[(r0 + e / c_count) * cols + c0 + e % c_count];
  }
  __shared__ float part[kSumThreads];
  part[threadIdx.x] = sum;
  __syncthreads();
  for (int half = kSumThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) part[threadIdx.x] += part[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) dc[blockIdx.x] = beta * part[0];
}

// launch_relu_mask: columns per block (one per lane), and the warps that split the rows. With a
// column sum the grid is one block row (cols / 32 blocks: 16 for LeNet's fc1), so each block
// has 32 warps, each thread's rows few and their loads unrolled in flight.
constexpr int kMaskColumns = 32;
constexpr int kMaskRowGroups = 32;

// Block (x, y): columns blockIdx.x * kMaskColumns + x, rows [blockIdx.y * rows_per_block, +
// rows_per_block) split over the y warps; one block row (gridDim.y 1) when dc is summed.
__global__ void relu_mask_kernel(const float* __restrict__ dy, const float* __restrict__ y, float* __restrict__ dz,
                                 int64_t rows, int64_t cols, int64_t rows_per_block, float* __restrict__ dc,
                                 float beta) {
  __shared__ float part[kMaskRowGroups][kMaskColumns];
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kMaskColumns + threadIdx.x;
  const int64_t first = static_cast<int64_t>(blockIdx.y) * rows_per_block;
  const int64_t end = first + rows_per_block < rows ? first + rows_per_block : rows;
  float sum = 0.0f;
  if (col < cols) {
#pragma unroll 4
    for (int64_t r = first + threadIdx.y; r < end; r += kMaskRowGroups) {
      const int64_t i = r * cols + col;
      const float v = y[i] > 0.0f ? dy[i] : 0.0f;
      dz[i] = v;
      sum += v;
    }
  }
  part[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (!dc || threadIdx.y != 0 || col >= cols) return;
  float total = part[0][threadIdx.x];
  for (int g = 1; g < kMaskRowGroups; ++g) total += part[g][threadIdx.x];
  dc[col] = beta * total;
}

}  // namespace

void launch_relu_mask(const float* dy, const float* y, float* dz, int64_t rows, int64_t cols, float* dc, float beta,
                      cudaStream_t stream) {
  const int64_t blocks = (cols + kMaskColumns - 1) / kMaskColumns;
  if (blocks == 0) return;
  // Without a column sum the rows spread over blocks too (at most 65535 block rows).
  const int64_t rows_per_block =
      dc ? std::max<int64_t>(rows, 1) : std::max<int64_t>(4 * kMaskRowGroups, (rows + 65534) / 65535);
  const int64_t block_rows = dc ? 1 : std::max<int64_t>(1, (rows + rows_per_block - 1) / rows_per_block);
  const dim3 grid(static_cast<unsigned>(blocks), static_cast<unsigned>(block_rows));
  relu_mask_kernel<<<grid, dim3(kMaskColumns, kMaskRowGroups), 0, stream>>>(dy, y, dz, rows, cols, rows_per_block,
                                                                            dc, beta);
  check_launch("relu mask");
}

void launch_broadcast_sum(const float* dy, float* dc, int64_t rows, int64_t cols, int64_t c_rows, int64_t c_cols,
                          float beta, cudaStream_t stream) {
  const int64_t blocks = c_rows * c_cols;
  if (blocks == 0) return;
  broadcast_sum_kernel<<<static_cast<unsigned>(blocks), kSumThreads, 0, stream>>>(dy, dc, rows, cols, c_rows, c_cols,
                                                                                   beta);
  check_launch("broadcast_sum");
}

}  // namespace dnnx::cuda
