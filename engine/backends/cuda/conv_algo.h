// Choosing cuDNN's forward-convolution algorithm for one layer (DESIGN.md, "The planner"):
//   heuristic   cuDNN's ranked list (cudnnGetConvolutionForwardAlgorithm_v7), instant
//   exhaustive  every candidate timed on the planner's own scratch buffers
//               (cudnnFindConvolutionForwardAlgorithmEx), fastest first
// and, in that order, the first candidate that cuDNN can run on these descriptors, whose
// workspace fits the limit, whose math is allowed at the model's precision and, when asked,
// that is deterministic. Every other candidate is kept with the reason it lost.
#pragma once
#include <string>
#include <vector>

#include "backends/cuda/cuda_context.h"
#include "core/backend.h"

namespace dnnx::cuda {

// The descriptors of one forward convolution, as the kernel will run it.
struct ConvDescriptors {
  TensorDescriptor x;
  FilterDescriptor w;
  ConvolutionDescriptor conv;
  TensorDescriptor y;
};

struct ConvAlgoChoice {
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t workspace_bytes = 0;
  double time_ms = -1;  // measured (exhaustive); -1 when only ranked
  std::vector<Rejected> rejected;
};

// Throws DeviceError listing every candidate and its reason when none qualifies.
ConvAlgoChoice choose_conv_algorithm(const CudaContext& ctx, const ConvDescriptors& d, size_t workspace_limit);

// "IMPLICIT_PRECOMP_GEMM", as the plan shows it.
std::string conv_algo_name(cudnnConvolutionFwdAlgo_t algo);

}  // namespace dnnx::cuda
