// Choosing cuDNN's convolution algorithm for one layer and one direction (forward, backward data,
// backward filter: conv_direction.h) by one policy (docs/architecture.md, "Algorithm search";
// the protocol is Note [one search], search.h):
//   heuristic   cuDNN's ranked list, instant
//   exhaustive  every candidate timed on the planner's own scratch buffers, fastest first; the
//               choice is kept in the persistent plan cache (plan_cache.h), and a later plan of
//               the same signature re-validates the cached choice instead of timing again
// and, in that order, the first candidate that cuDNN can run on these descriptors, whose
// workspace fits the limit, whose math the model's precision allows, that is deterministic when
// asked, and whose workspace can be allocated now. A candidate that fails moves the choice to
// the next one (the fallback), never to another math type: the precision bounds every
// candidate. Every candidate that lost is kept with its reason.
#pragma once
#include <string>
#include <vector>

#include "backends/cuda/conv/conv_direction.h"
#include "backends/cuda/backend/cuda_context.h"
#include "backends/cuda/search/plan_cache.h"
#include "runtime/backend.h"

namespace dnnx::cuda {

// The descriptors of one convolution, as the kernel will run it (backward: dX, dW, dY have the
// shapes of x, w, y).
struct ConvDescriptors {
  TensorDescriptor x;
  FilterDescriptor w;
  ConvolutionDescriptor conv;
  TensorDescriptor y;
};

struct ConvAlgoChoice {
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  cudnnMathType_t math_type = CUDNN_FMA_MATH;  // what the algorithm runs with (set on d.conv)
  size_t workspace_bytes = 0;
  double time_ms = -1;  // measured (exhaustive); -1 when only ranked
  bool from_cache = false;
  std::vector<TimedRejected> rejected;  // with their times (a cached own kernel's among them)
};

// The choice in any direction: `algo` is that direction's cuDNN enum as an int.
struct ConvSearchChoice {
  int algo = 0;
  cudnnMathType_t math_type = CUDNN_FMA_MATH;
  size_t workspace_bytes = 0;
  double time_ms = -1;
  bool from_cache = false;
  std::vector<TimedRejected> rejected;
};

// The precision a convolution of `data` elements runs at: the model's, except float32 data in an
// fp16 or bf16 model (Note [half storage]: values carry the precision), which runs as at fp32.
// Such a conv has no half kernel (ConvTranspose), was kept float32 (Note [fp16 range], Note
// [measured precision]) or is a fine-tuned layer (Note [bf16 fine-tuning]): FMA math, never TF32
// nor a half conversion, so that it computes what the fp32 plan computes, and its plan row says
// "fp32 (CUDNN_FMA_MATH)".
Precision conv_precision(Precision model, DType data);
// The same for the convolution of `d`, by its input tensor's data type.
Precision conv_precision(const CudaContext& ctx, const ConvDescriptors& d);

// The math type a convolution descriptor asks for at `precision`: CUDNN_FMA_MATH for fp32 (no
// TF32), CUDNN_TENSOR_OP_MATH for tf32, fp16 and bf16 (half operands, fp32 accumulation).
cudnnMathType_t conv_math_type(Precision precision);

// The math type a candidate cuDNN reported with `reported` runs with: fp32 keeps FMA; tf32, fp16
// and bf16 the tensor-op math they asked for, unless the candidate is an FMA-only kernel.
cudnnMathType_t run_math(Precision precision, cudnnMathType_t reported);
// Sets that math type on d.conv (a candidate's workspace may depend on it); fp32 (and float32
// data, conv_precision) leaves FMA.
void set_candidate_math(const CudaContext& ctx, const ConvDescriptors& d, cudnnMathType_t reported);

// Note [auto search] (conv_algo.cc): whether the planner times the candidates for `d` in
// direction `dir` (the policy, algo_search, and under "auto" the conv's precision, its work and
// the direction), and the workspace limit a model gets when it names none.
bool conv_search_timed(const CudaContext& ctx, const ConvDescriptors& d, ConvDirection dir = ConvDirection::Forward);
size_t auto_workspace_limit(const DeviceOptions& options, size_t device_memory);

// Chooses for `d` (whose conv descriptor carries conv_math_type) and sets the chosen math type
// on d.conv. `layer` names the node in warnings. Throws DeviceError listing every candidate and
// its reason when none qualifies.
ConvAlgoChoice choose_conv_algorithm(const CudaContext& ctx, const ConvDescriptors& d, size_t workspace_limit,
                                     const std::string& layer);

// The same policy in `dir`: the candidates, workspace queries and timed search of that direction,
// plan-cache keys that name it.
ConvSearchChoice choose_conv_algorithm(const CudaContext& ctx, ConvDirection dir, const ConvDescriptors& d,
                                       size_t workspace_limit, const std::string& layer);

// "IMPLICIT_PRECOMP_GEMM", as the plan shows it.
std::string conv_algo_name(cudnnConvolutionFwdAlgo_t algo);
// "fp32 (CUDNN_FMA_MATH)", "tf32 (CUDNN_TENSOR_OP_MATH)", "fp16 storage, tensor ops, fp32
// accumulation (CUDNN_TENSOR_OP_MATH)" ("bf16 storage, ..." at bf16), as the plan shows it;
// `precision` is the conv's own (conv_precision).
std::string conv_math_name(cudnnMathType_t math, Precision precision);

}  // namespace dnnx::cuda
