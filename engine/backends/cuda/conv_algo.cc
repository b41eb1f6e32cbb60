#include "backends/cuda/conv_algo.h"

#include <cstdio>

namespace dnnx::cuda {

namespace {

std::string mib(size_t bytes) {
  const double m = static_cast<double>(bytes) / (1 << 20);
  char text[32];
  std::snprintf(text, sizeof(text), m < 10 ? "%.2f MiB" : "%.0f MiB", m);
  return text;
}

// Why this candidate cannot be taken ("" when it can); `workspace` gets its exact need.
std::string disqualify(const CudaContext& ctx, const ConvDescriptors& d, const cudnnConvolutionFwdAlgoPerf_t& perf,
                       size_t workspace_limit, size_t& workspace) {
  if (perf.status != CUDNN_STATUS_SUCCESS) return std::string("cuDNN: ") + status_name(perf.status);
  // The descriptor's math is FMA at fp32, and that is what runs; a candidate ranked for
  // tensor-op math would be a different kernel from the one cuDNN ranked.
  if (perf.mathType == CUDNN_TENSOR_OP_MATH || perf.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) {
    return "tensor-op math (TF32); precision fp32 allows FMA math only";
  }
  if (ctx.options.deterministic && perf.determinism == CUDNN_NON_DETERMINISTIC) {
    return "not deterministic (deterministic=True)";
  }
  const cudnnStatus_t status = cudnnGetConvolutionForwardWorkspaceSize(ctx.cudnn, d.x, d.w, d.conv, d.y, perf.algo,
                                                                       &workspace);
  if (status != CUDNN_STATUS_SUCCESS) return std::string("cuDNN workspace query: ") + status_name(status);
  if (workspace > workspace_limit) {
    return "needs " + mib(workspace) + " of workspace, over the limit of " + mib(workspace_limit);
  }
  return "";
}

}  // namespace

std::string conv_algo_name(cudnnConvolutionFwdAlgo_t algo) {
  switch (algo) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "DIRECT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "FFT_TILING";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    default: return "algo " + std::to_string(static_cast<int>(algo));
  }
}

ConvAlgoChoice choose_conv_algorithm(const CudaContext& ctx, const ConvDescriptors& d, size_t workspace_limit) {
  int max_count = 0;
  check(cudnnGetConvolutionForwardAlgorithmMaxCount(ctx.cudnn, &max_count), "cudnnGetConvolutionForwardAlgorithmMaxCount");
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perfs(static_cast<size_t>(max_count));
  int returned = 0;
  check(cudnnGetConvolutionForwardAlgorithm_v7(ctx.cudnn, d.x, d.w, d.conv, d.y, max_count, &returned, perfs.data()),
        "cudnnGetConvolutionForwardAlgorithm_v7");
  ConvAlgoChoice choice;
  bool chosen = false;
  for (int i = 0; i < returned; ++i) {
    const cudnnConvolutionFwdAlgoPerf_t& perf = perfs[static_cast<size_t>(i)];
    const std::string name = conv_algo_name(perf.algo);
    if (chosen) {
      if (perf.status == CUDNN_STATUS_SUCCESS) {
        choice.rejected.push_back({name, "ranked below " + conv_algo_name(choice.algo) + " by cuDNN's heuristic"});
      }
      continue;
    }
    size_t workspace = 0;
    const std::string why = disqualify(ctx, d, perf, workspace_limit, workspace);
    if (!why.empty()) {
      choice.rejected.push_back({name, why});
      continue;
    }
    choice.algo = perf.algo;
    choice.workspace_bytes = workspace;
    chosen = true;
  }
  if (!chosen) {
    std::string reasons;
    for (const Rejected& r : choice.rejected) reasons += "; " + r.algorithm + ": " + r.reason;
    throw DeviceError("no cuDNN convolution algorithm qualifies (workspace limit " + mib(workspace_limit) + ")" +
                      reasons);
  }
  return choice;
}

}  // namespace dnnx::cuda
