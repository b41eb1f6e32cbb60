// One planned cublasLtMatmul on row-major operands (blas.h explains the swap): cuBLASLt computes
// Y^T[N,M] = op(B)^T op(A)^T column-major, so its "A" is the engine's B and its bias (one value
// per row of its D, i.e. per column N of Y) is a vector of N. Used by Gemm (gemm_cuda.cc), by
// Gemm's gradient (gemm_grad_cuda.cc) and by the channels-last 1x1 convolution
// (conv_gemm_cuda.cc), whose residual is the GEMM's C. Which of cuBLASLt's algorithms runs:
// Note [GEMM candidates] in lt_search.h.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "backends/cuda/dense/blas.h"
#include "backends/cuda/search/plan_cache.h"
#include "runtime/backend.h"

namespace dnnx::cuda {

// The workspace the GEMMs may take (cuBLASLt's own recommendation for Hopper is 32 MiB; 4 MiB
// keeps its heuristic's picks).
constexpr size_t kLtWorkspaceLimit = size_t{4} << 20;

// How the algorithm was chosen among cuBLASLt's heuristic list.
struct LtChoice {
  int rank = 0;         // its place in the list: 0 is the heuristic's own pick
  int listed = 1;       // how many candidates the list held (1: the heuristic's pick alone was asked)
  double time_ms = -1;  // measured by the exhaustive search; -1 when not measured
  bool from_cache = false;
  std::vector<TimedRejected> rejected;  // the timed candidates it beat, with their times
};

class LtMatmul {
 public:
  LtMatmul() = default;
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;
  ~LtMatmul();

  // Y = epilogue(alpha * op(A) op(B) [+ C]) for `c` (its beta is ignored: 0, or 1 when run is
  // given a residual C of Y's shape and layout); false when cuBLASLt has no algorithm for these
  // shapes within `workspace_limit`. With algo_search="exhaustive" the candidates are timed
  // (Search::timed, search.h).
  bool plan(const CudaContext& ctx, const GemmCall& c, cublasLtEpilogue_t epilogue, size_t workspace_limit);

  size_t workspace_bytes() const { return workspace_bytes_; }
  const LtChoice& choice() const { return choice_; }
  // What the plan row adds to "cublasLtMatmul ...": "" for the heuristic's pick, else e.g.
  // " [candidate 3 of 8, 0.0051 ms]".
  std::string choice_text() const;

  // `bias`: the epilogue's vector of N (nullptr without one); `c_in`: the residual (with_c only).
  void run(const CudaContext& ctx, const GemmCall& c, const void* a, const void* b, const void* bias, void* y,
           void* workspace, const void* c_in = nullptr) const;
  // The same with one of the heuristic's candidates in place of the planned one (the search
  // times each through this).
  void run_candidate(const CudaContext& ctx, const GemmCall& c, const cublasLtMatmulHeuristicResult_t& candidate,
                     const void* a, const void* b, const void* bias, void* y, void* workspace) const;

  // cuBLASLt's heuristic list for the planned descriptors, best first, at most `count` long.
  std::vector<cublasLtMatmulHeuristicResult_t> ranked(const CudaContext& ctx, size_t workspace_limit,
                                                      int count) const;

 private:
  // One cublasLtMatmul with `algo` (run's and run_candidate's common call).
  void matmul(const CudaContext& ctx, const GemmCall& c, const cublasLtMatmulAlgo_t& algo, size_t workspace_bytes,
              const void* a, const void* b, const void* bias, void* y, void* workspace, const void* c_in) const;

  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, y_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  size_t workspace_bytes_ = 0;
  LtChoice choice_;
};

}  // namespace dnnx::cuda
