// One planned cublasLtMatmul on row-major operands (blas.h explains the swap): cuBLASLt computes
// Y^T[N,M] = op(B)^T op(A)^T column-major, so its "A" is the engine's B and its bias (one value
// per row of its D, i.e. per column N of Y) is a vector of N. Used by Gemm (gemm_cuda.cc) and by
// the channels-last 1x1 convolution (conv_gemm_cuda.cc), whose residual is the GEMM's C.
#pragma once
#include <cstddef>

#include "backends/cuda/blas.h"

namespace dnnx::cuda {

// The workspace the GEMMs may take (cuBLASLt's own recommendation for Hopper is 32 MiB; 4 MiB
// keeps its heuristic's picks).
constexpr size_t kLtWorkspaceLimit = size_t{4} << 20;

class LtMatmul {
 public:
  LtMatmul() = default;
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;
  ~LtMatmul();

  // Y = epilogue(alpha * op(A) op(B) [+ C]) for `c` (its beta is ignored: 0, or 1 when run is
  // given a residual C of Y's shape and layout); false when cuBLASLt has no algorithm for these
  // shapes within `workspace_limit`.
  bool plan(const CudaContext& ctx, const GemmCall& c, cublasLtEpilogue_t epilogue, size_t workspace_limit);

  size_t workspace_bytes() const { return workspace_bytes_; }

  // `bias`: the epilogue's vector of N (nullptr without one); `c_in`: the residual (with_c only).
  void run(const CudaContext& ctx, const GemmCall& c, const void* a, const void* b, const void* bias, void* y,
           void* workspace, const void* c_in = nullptr) const;

 private:
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, y_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  size_t workspace_bytes_ = 0;
};

}  // namespace dnnx::cuda
