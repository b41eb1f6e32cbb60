// The one place the CUDA backend calls cuBLAS's GEMM: row-major operands, as the engine stores
// them. cuBLAS is column-major, and a row-major [M,N] matrix is its column-major transpose, so
// Y = op(A) op(B) is computed as Y^T = op(B)^T op(A)^T with the operands swapped.
#pragma once
#include <string>

#include "backends/cuda/backend/cuda_context.h"

namespace dnnx::cuda {

// One row-major GEMM: y[M,N] = alpha * op(a) * op(b) + beta * y. Batched when `batch` > 1, the
// i-th operands `stride_*` elements after the (i-1)-th (a stride of 0 repeats the operand).
struct GemmCall {
  bool trans_a = false, trans_b = false;
  int m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  int batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_y = 0;
  // The operands' and the result's type. Float32: cublasSgemm(StridedBatched). A half type
  // (Float16 with precision="fp16", BFloat16 with "bf16"): cublasGemmEx /
  // cublasGemmStridedBatchedEx with CUDA_R_16F or CUDA_R_16BF (blas_data_type) and
  // CUBLAS_COMPUTE_32F (tensor ops, fp32 accumulation; alpha, beta float).
  DType dtype = DType::Float32;
  bool half() const { return is_half(dtype); }
};

void row_major_gemm(const CudaContext& ctx, const GemmCall& call, const void* a, const void* b, void* y);

// cuBLAS's type of a GemmCall's elements: CUDA_R_32F, CUDA_R_16F or CUDA_R_16BF.
cudaDataType_t blas_data_type(DType dtype);

// The cuBLAS math mode for the model's precision, set once on the handle when the model opens:
// fp32 CUBLAS_DEFAULT_MATH (FMA, never TF32), tf32 CUBLAS_TF32_TENSOR_OP_MATH (the SGEMMs run on
// TF32 tensor cores, accumulating in fp32).
cublasMath_t blas_math_mode(Precision precision);
// What the plan shows for a cuBLAS layer of `dtype` elements: "fp32 (CUBLAS_DEFAULT_MATH, no
// TF32)", ...; for a float16 GEMM "fp16 storage, tensor ops, fp32 accumulation
// (CUBLAS_COMPUTE_32F)", for a bfloat16 one "bf16 storage, ...".
std::string blas_math_name(const CudaContext& ctx, DType dtype = DType::Float32);

}  // namespace dnnx::cuda
