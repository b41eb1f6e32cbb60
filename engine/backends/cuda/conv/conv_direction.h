// The three directions of a convolution that the planner chooses cuDNN algorithms for, and what
// differs between them: the algorithm enum and its names, the workspace query, cuDNN's ranked
// list and its timed search. conv_algo.cc's choice (limits, precision, determinism, fallback,
// plan cache) is written once over these; here is only the per-direction cuDNN plumbing.
//   Forward         x, w -> y     cudnnConvolutionForward
//   BackwardData    w, dy -> dx   cudnnConvolutionBackwardData
//   BackwardFilter  x, dy -> dw   cudnnConvolutionBackwardFilter
// The descriptors are the forward ones (ConvDescriptors) in every direction: dx has x's, dy y's,
// dw w's.
#pragma once
#include <string>
#include <vector>

#include "backends/cuda/backend/cuda_context.h"

namespace dnnx::cuda {

struct ConvDescriptors;

enum class ConvDirection { Forward, BackwardData, BackwardFilter };

// One candidate as cuDNN reports it, whatever the direction (its *AlgoPerf_t, algo as an int).
struct ConvCandidate {
  int algo = 0;
  cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
  float time = -1;  // ms, timed searches only
  cudnnDeterminism_t determinism = CUDNN_NON_DETERMINISTIC;
  cudnnMathType_t math_type = CUDNN_DEFAULT_MATH;
};

// "fwd", "bwd data", "bwd filter": in plan-cache keys and messages.
const char* direction_text(ConvDirection dir);

// "IMPLICIT_PRECOMP_GEMM" (forward), "BWD_DATA_ALGO_1", "BWD_FILTER_FFT_TILING": the backward
// names carry their direction, so that DNNX_TEST_FAIL_ALGO and the plan can tell them apart.
std::string conv_algo_name(ConvDirection dir, int algo);

// How many algorithms cuDNN knows in this direction (their enum values are 0 to this - 1).
int conv_algo_count(const CudaContext& ctx, ConvDirection dir);

// cuDNN's workspace need of `algo` for `d` in this direction (its status is the answer).
cudnnStatus_t conv_workspace_size(const CudaContext& ctx, ConvDirection dir, const ConvDescriptors& d, int algo,
                                  size_t* bytes);

// cuDNN's heuristic list for the direction (cudnnGet*Algorithm_v7), best first.
std::vector<ConvCandidate> heuristic_candidates(const CudaContext& ctx, ConvDirection dir, const ConvDescriptors& d);

// cudnnFind*AlgorithmEx on the planner's scratch buffers x, w, y (each direction reads two of
// them and writes the third), with `workspace_bytes` of workspace; fastest first.
// One run of `algo` in the direction on those buffers (alpha 1, beta 0), with d.conv's math
// type as it is set; cuDNN's status is the answer.
cudnnStatus_t run_conv_direction(const CudaContext& ctx, ConvDirection dir, const ConvDescriptors& d, int algo,
                                 void* x, void* w, void* y, void* workspace, size_t workspace_bytes);

std::vector<ConvCandidate> find_candidates(const CudaContext& ctx, ConvDirection dir, const ConvDescriptors& d,
                                           void* x, void* w, void* y, void* workspace, size_t workspace_bytes);

}  // namespace dnnx::cuda
