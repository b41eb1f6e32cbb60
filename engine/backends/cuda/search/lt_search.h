// Note [GEMM candidates]: which of cuBLASLt's algorithms a planned GEMM runs (lt_matmul.h).
//   heuristic   cublasLtMatmulAlgoGetHeuristic's first pick, asked for one (instant, and the
//               same in every process)
//   exhaustive  its first kLtCandidates picks, each timed on scratch operands (after a warm-up,
//               the lower of two rounds of means of 5-20 runs between CUDA events: single means
//               on an idle GPU varied by 40% between processes); the fastest wins, but a
//               later-ranked candidate must beat the one ahead of it by more than 10% (timed
//               alone, near-ties reorder between processes and rank wrongly inside a step:
//               kLtTakeOver, Note [the pick] in pick.h). The choice is kept in the plan cache
//               (plan_cache.h, as a GemmEntry of plan_entries.h) by its rank in the
//               list, which cuBLASLt gives in the same order for the same version, GPU and
//               descriptors, so a second process, or a second tuner of the same model, runs the
//               same algorithm and gets the same bits (deterministic=True holds across them).
// Why: on small GEMMs the heuristic's pick is far from the best. Measured on an H200 (cuBLAS
// 13.1), LeNet's fine-tuning step at batch 256: fc2 forward (256x500 by 500x10) took a
// three-kernel split-K path of 18.7 us; fc1's (256x800 by 800x500) a 32x32-tile kernel of
// 20.9 us on 128 CTAs (bench/RESULTS_CUDA.md has what the timed candidates give).
// Each cuBLASLt algorithm is deterministic run to run (no atomics), so timing changes which
// bits come out only when it changes the algorithm, which the plan cache keeps fixed.
#pragma once
#include <string>
#include <vector>

#include "backends/cuda/dense/lt_matmul.h"
#include "backends/cuda/search/search.h"

namespace dnnx::cuda {

constexpr int kLtCandidates = 12;

// An exhaustive search's choice (search.timed()). `list`: the heuristic's candidates for lt's
// descriptors (not empty). The plan cache's entry is
// used when it still names a candidate with the same workspace; otherwise the candidates are
// timed (a candidate that fails to run, or whose workspace cannot be had, is rejected).
LtChoice choose_lt_candidate(const Search& search, const LtMatmul& lt, const GemmCall& c,
                             cublasLtEpilogue_t epilogue, size_t workspace_limit,
                             const std::vector<cublasLtMatmulHeuristicResult_t>& list);

// "gemm | NVIDIA H200 sm_90 cuBLASLt 130100 | 256x10x500 ta 0 tb 1 | fp32 compute 32F |
//  epilogue 4 | workspace limit 4194304"
std::string lt_cache_key(const CudaContext& ctx, const GemmCall& c, cublasLtEpilogue_t epilogue,
                         size_t workspace_limit);

}  // namespace dnnx::cuda
