// Launchers of the dense layers' own gradient kernels (dense_grad_kernels.cu): what cuBLAS
// and cuDNN do not cover. Each queues its kernel on `stream` and checks the launch.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

namespace dnnx::cuda {

// Gemm's bias gradient: C [c_rows, c_cols] was broadcast to Y [rows, cols] (c_rows is 1 or
// rows, c_cols 1 or cols); dc[i, j] = beta * the sum of dy over the elements that read
// C[i, j]. One block per element of C, a fixed reduction order (deterministic).
void launch_broadcast_sum(const float* dy, float* dc, int64_t rows, int64_t cols, int64_t c_rows, int64_t c_cols,
                          float beta, cudaStream_t stream);

// Gemm+Relu's mask: dz[r, c] = dy[r, c] where y[r, c] > 0, else 0 ([rows, cols]), and, when dc
// is given, dc[c] = beta * the column sums of dz (the row-vector bias's gradient) in the same
// pass. A block per 32 columns, its warps over the rows (all of them when dc is summed, so keep
// rows modest then), added in a fixed order (deterministic).
void launch_relu_mask(const float* dy, const float* y, float* dz, int64_t rows, int64_t cols, float* dc, float beta,
                      cudaStream_t stream);

}  // namespace dnnx::cuda
