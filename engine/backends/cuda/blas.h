// The one place the CUDA backend calls cuBLAS's GEMM: row-major operands, as the engine stores
// them. cuBLAS is column-major, and a row-major [M,N] matrix is its column-major transpose, so
// Y = op(A) op(B) is computed as Y^T = op(B)^T op(A)^T with the operands swapped.
#pragma once
#include "backends/cuda/cuda_context.h"

namespace dnnx::cuda {

// One row-major GEMM: y[M,N] = alpha * op(a) * op(b) + beta * y. Batched when `batch` > 1, the
// i-th operands `stride_*` elements after the (i-1)-th (a stride of 0 repeats the operand).
struct GemmCall {
  bool trans_a = false, trans_b = false;
  int m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  int batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_y = 0;
};

void row_major_gemm(const CudaContext& ctx, const GemmCall& call, const float* a, const float* b, float* y);

}  // namespace dnnx::cuda
