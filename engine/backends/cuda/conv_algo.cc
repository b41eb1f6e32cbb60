#include "backends/cuda/conv_algo.h"

#include <algorithm>
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
  const cudnnStatus_t query = cudnnGetConvolutionForwardWorkspaceSize(ctx.cudnn, d.x, d.w, d.conv, d.y, perf.algo,
                                                                      &workspace);
  // First the limit: an exhaustive search does not even try a candidate that needs more.
  if (query == CUDNN_STATUS_SUCCESS && workspace > workspace_limit) {
    return "needs " + mib(workspace) + " of workspace, over the limit of " + mib(workspace_limit);
  }
  if (perf.status != CUDNN_STATUS_SUCCESS) return std::string("cuDNN: ") + status_name(perf.status);
  if (query != CUDNN_STATUS_SUCCESS) return std::string("cuDNN workspace query: ") + status_name(query);
  // The descriptor's math is FMA at fp32, and that is what runs; a candidate ranked for
  // tensor-op math would be a different kernel from the one cuDNN ranked.
  if (perf.mathType == CUDNN_TENSOR_OP_MATH || perf.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) {
    return "tensor-op math (TF32); precision fp32 allows FMA math only";
  }
  if (ctx.options.deterministic && perf.determinism == CUDNN_NON_DETERMINISTIC) {
    return "not deterministic (deterministic=True)";
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

namespace {

// cuDNN's ranked heuristic list.
std::vector<cudnnConvolutionFwdAlgoPerf_t> ranked_candidates(const CudaContext& ctx, const ConvDescriptors& d) {
  int max_count = 0;
  check(cudnnGetConvolutionForwardAlgorithmMaxCount(ctx.cudnn, &max_count), "cudnnGetConvolutionForwardAlgorithmMaxCount");
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perfs(static_cast<size_t>(max_count));
  int returned = 0;
  check(cudnnGetConvolutionForwardAlgorithm_v7(ctx.cudnn, d.x, d.w, d.conv, d.y, max_count, &returned, perfs.data()),
        "cudnnGetConvolutionForwardAlgorithm_v7");
  perfs.resize(static_cast<size_t>(returned));
  return perfs;
}

// Every candidate timed by cuDNN, fastest first, on scratch X, W and Y filled with a non-zero
// pattern (timing on zeros can flatter a kernel) and a workspace as large as the largest need
// that fits the limit. The buffers are freed before the plan goes on.
std::vector<cudnnConvolutionFwdAlgoPerf_t> timed_candidates(const CudaContext& ctx, const ConvDescriptors& d,
                                                            size_t workspace_limit) {
  std::vector<cudnnConvolutionFwdAlgoPerf_t> ranked = ranked_candidates(ctx, d);
  size_t search_workspace = 0;
  for (const cudnnConvolutionFwdAlgoPerf_t& perf : ranked) {
    size_t need = 0;
    if (cudnnGetConvolutionForwardWorkspaceSize(ctx.cudnn, d.x, d.w, d.conv, d.y, perf.algo, &need) ==
            CUDNN_STATUS_SUCCESS &&
        need <= workspace_limit) {
      search_workspace = std::max(search_workspace, need);
    }
  }
  size_t x_bytes = 0, w_bytes = 0, y_bytes = 0;
  check(cudnnGetTensorSizeInBytes(d.x, &x_bytes), "cudnnGetTensorSizeInBytes");
  check(cudnnGetFilterSizeInBytes(d.w, &w_bytes), "cudnnGetFilterSizeInBytes");
  check(cudnnGetTensorSizeInBytes(d.y, &y_bytes), "cudnnGetTensorSizeInBytes");
  const DeviceMemory x = device_alloc(x_bytes, "cudaMalloc (search X)");
  const DeviceMemory w = device_alloc(w_bytes, "cudaMalloc (search W)");
  const DeviceMemory y = device_alloc(y_bytes, "cudaMalloc (search Y)");
  const DeviceMemory workspace = device_alloc(search_workspace, "cudaMalloc (search workspace)");
  constexpr int kPattern = 0x3c;  // every float 0x3c3c3c3c, about 0.0115
  check(cudaMemsetAsync(x.get(), kPattern, x_bytes, ctx.stream), "cudaMemsetAsync");
  check(cudaMemsetAsync(w.get(), kPattern, w_bytes, ctx.stream), "cudaMemsetAsync");
  check(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize");
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perfs(ranked.size());
  int returned = 0;
  check(cudnnFindConvolutionForwardAlgorithmEx(ctx.cudnn, d.x, x.get(), d.w, w.get(), d.conv, d.y, y.get(),
                                               static_cast<int>(perfs.size()), &returned, perfs.data(),
                                               workspace.get(), search_workspace),
        "cudnnFindConvolutionForwardAlgorithmEx");
  perfs.resize(static_cast<size_t>(returned));
  return perfs;
}

std::string ms(double t) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4f ms", t);
  return text;
}

}  // namespace

ConvAlgoChoice choose_conv_algorithm(const CudaContext& ctx, const ConvDescriptors& d, size_t workspace_limit) {
  const bool timed = ctx.options.algo_search == AlgoSearch::Exhaustive;
  const std::vector<cudnnConvolutionFwdAlgoPerf_t> perfs =
      timed ? timed_candidates(ctx, d, workspace_limit) : ranked_candidates(ctx, d);
  ConvAlgoChoice choice;
  bool chosen = false;
  for (const cudnnConvolutionFwdAlgoPerf_t& perf : perfs) {
    const std::string name = conv_algo_name(perf.algo);
    if (chosen) {
      if (perf.status != CUDNN_STATUS_SUCCESS) continue;
      choice.rejected.push_back(
          {name, timed ? ms(perf.time) + ", slower than " + conv_algo_name(choice.algo) + " (" + ms(choice.time_ms) + ")"
                       : "ranked below " + conv_algo_name(choice.algo) + " by cuDNN's heuristic"});
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
    if (timed) choice.time_ms = perf.time;
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
