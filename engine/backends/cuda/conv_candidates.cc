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

// Scratch X, W and Y are filled with a non-zero pattern (timing on zeros can flatter a kernel);
// every buffer is freed before the plan goes on.
TimedCandidates timed_candidates(const CudaContext& ctx, ConvDirection dir, const ConvDescriptors& d,
                                 size_t workspace_limit) {
  const std::vector<ConvCandidate> ranked = heuristic_candidates(ctx, dir, d);
  std::vector<size_t> needs;  // each candidate's workspace within the limit
  for (const ConvCandidate& perf : ranked) {
    size_t need = 0;
    if (conv_workspace_size(ctx, dir, d, perf.algo, &need) == CUDNN_STATUS_SUCCESS &&
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
  check(cudaMemsetAsync(y.get(), kPattern, y_bytes, ctx.stream), "cudaMemsetAsync");  // dY backward
  check(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize");
  out.perfs = find_candidates(ctx, dir, d, x.get(), w.get(), y.get(), workspace.get(), out.search_workspace);
  ctx.stats->count("timing_runs");
  return out;
}

}  // namespace dnnx::cuda
