#include "backends/cuda/conv_candidates.h"

#include <algorithm>
#include <cstdio>

namespace dnnx::cuda {

std::string mib_text(size_t bytes) {
  const double m = static_cast<double>(bytes) / (1 << 20);
  char text[32];
  std::snprintf(text, sizeof(text), m < 10 ? "%.2f MiB" : "%.0f MiB", m);
  return text;
}

std::string ms_text(double t) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4f ms", t);
  return text;
}

bool try_plan_alloc(const CudaContext& ctx, size_t bytes, DeviceMemory& out) {
  out.reset();
  if (bytes == 0) return true;
  if (bytes > ctx.hooks.oom_above) return false;
  void* ptr = nullptr;
  const cudaError_t status = cudaMalloc(&ptr, bytes);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // not sticky: clear it so that the next call does not see it
    return false;
  }
  check(status, "cudaMalloc (plan-time workspace)");
  out.reset(ptr);
  return true;
}

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

// Scratch X, W and Y are filled with a non-zero pattern (timing on zeros can flatter a kernel);
// every buffer is freed before the plan goes on.
TimedCandidates timed_candidates(const CudaContext& ctx, const ConvDescriptors& d, size_t workspace_limit) {
  const std::vector<cudnnConvolutionFwdAlgoPerf_t> ranked = ranked_candidates(ctx, d);
  std::vector<size_t> needs;  // each candidate's workspace within the limit
  for (const cudnnConvolutionFwdAlgoPerf_t& perf : ranked) {
    size_t need = 0;
    if (cudnnGetConvolutionForwardWorkspaceSize(ctx.cudnn, d.x, d.w, d.conv, d.y, perf.algo, &need) ==
            CUDNN_STATUS_SUCCESS &&
        need <= workspace_limit) {
      needs.push_back(need);
    }
  }
  size_t x_bytes = 0, w_bytes = 0, y_bytes = 0;
  check(cudnnGetTensorSizeInBytes(d.x, &x_bytes), "cudnnGetTensorSizeInBytes");
  check(cudnnGetFilterSizeInBytes(d.w, &w_bytes), "cudnnGetFilterSizeInBytes");
  check(cudnnGetTensorSizeInBytes(d.y, &y_bytes), "cudnnGetTensorSizeInBytes");
  const DeviceMemory x = device_alloc(x_bytes, "cudaMalloc (search X)");
  const DeviceMemory w = device_alloc(w_bytes, "cudaMalloc (search W)");
  const DeviceMemory y = device_alloc(y_bytes, "cudaMalloc (search Y)");

  TimedCandidates out;
  DeviceMemory workspace;
  size_t ceiling = workspace_limit;
  while (true) {
    out.search_workspace = 0;
    for (size_t need : needs) {
      if (need <= ceiling) out.search_workspace = std::max(out.search_workspace, need);
    }
    if (try_plan_alloc(ctx, out.search_workspace, workspace)) break;
    out.notes.push_back({"search workspace", mib_text(out.search_workspace) +
                                                 " could not be allocated (out of memory); searched within less"});
    ceiling = out.search_workspace - 1;  // > 0: a zero-byte workspace always "allocates"
  }

  constexpr int kPattern = 0x3c;  // every float 0x3c3c3c3c, about 0.0115
  check(cudaMemsetAsync(x.get(), kPattern, x_bytes, ctx.stream), "cudaMemsetAsync");
  check(cudaMemsetAsync(w.get(), kPattern, w_bytes, ctx.stream), "cudaMemsetAsync");
  check(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize");
  out.perfs.resize(ranked.size());
  int returned = 0;
  check(cudnnFindConvolutionForwardAlgorithmEx(ctx.cudnn, d.x, x.get(), d.w, w.get(), d.conv, d.y, y.get(),
                                               static_cast<int>(out.perfs.size()), &returned, out.perfs.data(),
                                               workspace.get(), out.search_workspace),
        "cudnnFindConvolutionForwardAlgorithmEx");
  out.perfs.resize(static_cast<size_t>(returned));
  ctx.stats->count("timing_runs");
  return out;
}

}  // namespace dnnx::cuda
