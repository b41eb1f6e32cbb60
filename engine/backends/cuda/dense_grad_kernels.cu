#include "backends/cuda/cuda_check.h"
#include "backends/cuda/dense_grad_kernels.h"

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

}  // namespace

void launch_broadcast_sum(const float* dy, float* dc, int64_t rows, int64_t cols, int64_t c_rows, int64_t c_cols,
                          float beta, cudaStream_t stream) {
  const int64_t blocks = c_rows * c_cols;
  if (blocks == 0) return;
  broadcast_sum_kernel<<<static_cast<unsigned>(blocks), kSumThreads, 0, stream>>>(dy, dc, rows, cols, c_rows, c_cols,
                                                                                   beta);
  check_launch("broadcast_sum");
}

}  // namespace dnnx::cuda
