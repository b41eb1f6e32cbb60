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

cublasMath_t blas_math_mode(Precision precision) {
  return precision == Precision::Tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
}

std::string blas_math_name(const CudaContext& ctx) {
  return ctx.options.precision == Precision::Tf32 ? "tf32 (CUBLAS_TF32_TENSOR_OP_MATH)"
                                                  : "fp32 (CUBLAS_DEFAULT_MATH, no TF32)";
}

}  // namespace dnnx::cuda
