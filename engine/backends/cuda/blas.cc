#include "backends/cuda/blas.h"

namespace dnnx::cuda {

void row_major_gemm(const CudaContext& ctx, const GemmCall& c, const float* a, const float* b, float* y) {
  // Leading dims of the row-major operands as stored: A is [M,K] ([K,M] transposed), B [K,N] ([N,K]).
  const int lda = c.trans_a ? c.m : c.k;
  const int ldb = c.trans_b ? c.k : c.n;
  const cublasOperation_t op_a = c.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = c.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (c.batch == 1) {
    check(cublasSgemm(ctx.cublas, op_b, op_a, c.n, c.m, c.k, &c.alpha, b, ldb, a, lda, &c.beta, y, c.n),
          "cublasSgemm");
    return;
  }
  check(cublasSgemmStridedBatched(ctx.cublas, op_b, op_a, c.n, c.m, c.k, &c.alpha, b, ldb, c.stride_b, a, lda,
                                  c.stride_a, &c.beta, y, c.n, c.stride_y, c.batch),
        "cublasSgemmStridedBatched");
}

}  // namespace dnnx::cuda
