#include "backends/cuda/dense/blas.h"

namespace dnnx::cuda {

namespace {

// The half GEMM: float16 (CUDA_R_16F) or bfloat16 (CUDA_R_16BF) A, B and Y, fp32 accumulation
// on tensor cores (CUBLAS_COMPUTE_32F takes both types, float alpha and beta).
void half_gemm(const CudaContext& ctx, const GemmCall& c, const void* a, int lda, const void* b, int ldb, void* y,
               cublasOperation_t op_a, cublasOperation_t op_b) {
  const cudaDataType_t type = blas_data_type(c.dtype);
  const bool bf16 = c.dtype == DType::BFloat16;
  if (c.batch == 1) {
    check(cublasGemmEx(ctx.cublas, op_b, op_a, c.n, c.m, c.k, &c.alpha, b, type, ldb, a, type, lda, &c.beta, y, type,
                       c.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          bf16 ? "cublasGemmEx (bf16)" : "cublasGemmEx (fp16)");
    return;
  }
  check(cublasGemmStridedBatchedEx(ctx.cublas, op_b, op_a, c.n, c.m, c.k, &c.alpha, b, type, ldb, c.stride_b, a, type,
                                   lda, c.stride_a, &c.beta, y, type, c.n, c.stride_y, c.batch, CUBLAS_COMPUTE_32F,
                                   CUBLAS_GEMM_DEFAULT),
        bf16 ? "cublasGemmStridedBatchedEx (bf16)" : "cublasGemmStridedBatchedEx (fp16)");
}

}  // namespace

void row_major_gemm(const CudaContext& ctx, const GemmCall& c, const void* a_ptr, const void* b_ptr, void* y_ptr) {
  // Leading dims of the row-major operands as stored: A is [M,K] ([K,M] transposed), B [K,N] ([N,K]).
  const int lda = c.trans_a ? c.m : c.k;
  const int ldb = c.trans_b ? c.k : c.n;
  const cublasOperation_t op_a = c.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = c.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (c.half()) {
    half_gemm(ctx, c, a_ptr, lda, b_ptr, ldb, y_ptr, op_a, op_b);
    return;
  }
  const auto* a = static_cast<const float*>(a_ptr);
  const auto* b = static_cast<const float*>(b_ptr);
  auto* y = static_cast<float*>(y_ptr);
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

cudaDataType_t blas_data_type(DType dtype) {
  if (dtype == DType::Float16) return CUDA_R_16F;
  if (dtype == DType::BFloat16) return CUDA_R_16BF;
  return CUDA_R_32F;
}

std::string blas_math_name(const CudaContext& ctx, DType dtype) {
  if (is_half(dtype)) {
    return std::string(half_storage_name(dtype)) + " storage, tensor ops, fp32 accumulation (CUBLAS_COMPUTE_32F)";
  }
  return ctx.options.precision == Precision::Tf32 ? "tf32 (CUBLAS_TF32_TENSOR_OP_MATH)"
                                                  : "fp32 (CUBLAS_DEFAULT_MATH, no TF32)";
}

}  // namespace dnnx::cuda
