// One planned int8 cublasLtMatmul on int8 tensor cores (IMMA), int32 accumulation and output:
//   sums[rows, m_pad] (int32, row-major) = x[rows, k_pad] (int8, row-major) . w[m_pad, k_pad]^T
// with w int8 row-major (output channel by output channel). In cuBLASLt's column-major terms
// (blas.h's swap) that is D[m_pad, rows] = A^T B with A = w seen as [k_pad, m_pad] (ld k_pad),
// B = x seen as [k_pad, rows] (ld k_pad), D ld m_pad: the "TN" form.
//
// Note [cublasLt int8 requirements]: cuBLASLt's int8 GEMM with the regular (column) ordering
// takes CUBLAS_COMPUTE_32I with CUDA_R_32I scale (alpha, beta int32), A and B CUDA_R_8I, C and D
// CUDA_R_32I, and IMMA kernels only where A is transposed and B is not ("TN"), m and k are
// multiples of 4, the leading dimensions are multiples of 4, and every pointer is 4-byte aligned
// (16 preferred) (cuBLAS's cublasLtMatmul documentation). The caller pads: m_pad and k_pad are
// multiples of 4 (int8_gemm_cuda.cc pads W's channels and columns with zeros at plan time and X's
// columns in its copy), and the heuristic is asked for algorithms that take 16-byte aligned
// pointers, which the arena (64-byte blocks), cudaMalloc and the workspace offsets give.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "backends/cuda/backend/cuda_context.h"

namespace dnnx::cuda {

// The alignment the planned algorithm may assume of every pointer.
constexpr size_t kInt8GemmAlignment = 16;

class Int8LtGemm {
 public:
  Int8LtGemm() = default;
  Int8LtGemm(const Int8LtGemm&) = delete;
  Int8LtGemm& operator=(const Int8LtGemm&) = delete;
  ~Int8LtGemm();

  // "" when cuBLASLt has an algorithm for these sizes within `workspace_limit`, else why not.
  // m_pad and k_pad must be multiples of 4 (Note [cublasLt int8 requirements]).
  std::string plan(const CudaContext& ctx, int64_t rows, int64_t m_pad, int64_t k_pad, size_t workspace_limit);

  size_t workspace_bytes() const { return workspace_bytes_; }
  // x [rows, k_pad], w [m_pad, k_pad], sums [rows, m_pad]; each pointer 16-byte aligned.
  void run(const CudaContext& ctx, const int8_t* x, const int8_t* w, int32_t* sums, void* workspace) const;

 private:
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  size_t workspace_bytes_ = 0;
};

}  // namespace dnnx::cuda
