#include "backends/cuda/search/conv_candidates.h"

#include <algorithm>
#include <cstdio>

#include "backends/cuda/search/pick.h"

namespace dnnx::cuda {

bool try_plan_alloc(const CudaContext& ctx, size_t bytes, DeviceMemory& out) {
  out.reset();
  if (bytes == 0) return true;
  if (bytes > ctx.hooks.oom_above) return false;
  if (!ctx.memory->try_take(bytes)) return false;  // past memory_limit: as if out of memory
  void* ptr = nullptr;
  const cudaError_t status = cudaMalloc(&ptr, bytes);
  if (status != cudaSuccess) ctx.memory->give(bytes);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // not sticky: clear it so that the next call does not see it
    return false;
  }
  check(status, "cudaMalloc (plan-time workspace)");
  out = DeviceMemory(ptr, CudaFree{ctx.memory.get(), bytes});
  return true;
}

namespace {

// Note [warm conv timing]: cudnnFind*AlgorithmEx runs each algorithm about once, cold, and on
// small layers its times rank them wrongly. Measured on an H200 (cuDNN 9.19), LeNet's conv2 at
// batch 256 (20 -> 50 channels, 5x5 on 12x12): Find gave IMPLICIT_GEMM 0.0756 ms and
// IMPLICIT_PRECOMP_GEMM 0.0829 ms, while inside a replayed fine-tuning step the two took 67 and
// 46 us. So every candidate Find ran is timed again warm (after warm_up, the lower of
// kTimingRounds means of runs_for(its time) runs: device_timing.h), at the math type
// it would run with, and the list is sorted by those times (a stable sort: ties keep Find's
// order); near-ties then go to cuDNN's heuristic order (prefer_heuristic_on_near_ties). Both
// rules are Note [the pick]'s "fastest first" (pick.h).
//
// Note [retimed within reach]: re-timing every candidate cost ResNet-50 at batch 256 (fp32, an
// H200) some 5.7 s of its load, most of it in candidates that Find had timed at several times
// the best (FFT, GEMM at tens of milliseconds). Find's cold times misrank candidates that are
// close, not ones far apart: LeNet's pair above was 1.10x apart cold and 0.69x warm. So where
// Find's fastest took kRetimeAllBelowMs or more, only candidates within kRetimeReach of it are
// re-timed (none, now: below); the others keep Find's time. Smaller layers (cheap to re-time,
// and where cold times mislead most) re-time every candidate. DNNX_PROBE_RETIME_ALL=1 restores
// the full re-timing (test_hooks.h), for a probe to compare.
// The reach was 2.0 until the cold-load bench weighed it (DNNX_PROBE_RETIME_REACH, ResNet-50 at
// batch 256, fp32 "auto", an H100, 2026-12-06, one process each): reach 2.0 loaded in 3.73 s
// (2.56 s of search) and ran at 48.91 ms, reach 1.2 in 3.13 s (1.96) at 48.93, and no re-timing of
// these layers in 2.48 s (1.26) at 48.82. Find's own times rank the large layers as well as the
// re-timing did, so they stand: kRetimeReach 0 re-times none of them.
constexpr float kRetimeAllBelowMs = 0.5f;
constexpr float kRetimeReach = 0.0f;

// Find's fastest time among the candidates that ran (-1: none ran).
float fastest_found(const std::vector<ConvCandidate>& perfs) {
  float best = -1;
  for (const ConvCandidate& p : perfs) {
    if (p.status == CUDNN_STATUS_SUCCESS && p.time >= 0 && (best < 0 || p.time < best)) best = p.time;
  }
  return best;
}

void retime(const Search& search, ConvDirection dir, const ConvDescriptors& d, void* x, void* w, void* y,
            void* workspace, size_t workspace_bytes, std::vector<ConvCandidate>& perfs) {
  const CudaContext& ctx = search.context();
  std::vector<size_t> needs(perfs.size(), 0);
  std::vector<cudnnStatus_t> statuses(perfs.size(), CUDNN_STATUS_SUCCESS);
  const float best = fastest_found(perfs);
  const bool retime_all = ctx.hooks.retime_all || best < kRetimeAllBelowMs;
  auto prepare = [&](size_t i) {  // the math type it runs with, and a workspace within the search's
    if (perfs[i].status != CUDNN_STATUS_SUCCESS) return false;
    const float reach = ctx.hooks.retime_reach >= 0 ? ctx.hooks.retime_reach : kRetimeReach;
    if (!retime_all && perfs[i].time > reach * best) return false;  // keeps Find's time
    set_candidate_math(ctx, d, perfs[i].math_type);
    return conv_workspace_size(ctx, dir, d, perfs[i].algo, &needs[i]) == CUDNN_STATUS_SUCCESS &&
           needs[i] <= workspace_bytes;
  };
  auto run = [&](size_t i) {
    statuses[i] = run_conv_direction(ctx, dir, d, perfs[i].algo, x, w, y, workspace, needs[i]);
    return statuses[i] == CUDNN_STATUS_SUCCESS;
  };
  const CandidateTimes t = search.time(perfs.size(), prepare, run, "cudnn convolution (search)");
  for (size_t i = 0; i < perfs.size(); ++i) {
    if (t.failed[i]) perfs[i].status = statuses[i];
    if (t.ms[i] >= 0) perfs[i].time = static_cast<float>(t.ms[i]);
  }
  std::vector<double> ms;
  std::vector<bool> ran;
  for (const ConvCandidate& p : perfs) {
    ms.push_back(p.time);  // the float time, as cuDNN's structs hold it: the rule compares those
    ran.push_back(p.status == CUDNN_STATUS_SUCCESS);
  }
  std::vector<ConvCandidate> sorted;
  for (size_t i : fastest_first(ms, ran)) sorted.push_back(perfs[i]);
  perfs = std::move(sorted);
}

// Near-ties go to cuDNN's heuristic order: the first candidate of `ranked` whose re-timed time is
// within kConvNearTie of the fastest moves to the front (pick.h says why).
void prefer_heuristic_on_near_ties(const std::vector<ConvCandidate>& ranked, std::vector<ConvCandidate>& perfs) {
  if (perfs.empty()) return;
  std::vector<double> ms;
  std::vector<bool> ran;
  std::vector<int> rank;
  for (const ConvCandidate& p : perfs) {
    ms.push_back(p.time);
    ran.push_back(p.status == CUDNN_STATUS_SUCCESS);
    int r = -1;  // its first place in the heuristic's list
    for (size_t j = 0; j < ranked.size() && r < 0; ++j) {
      if (ranked[j].algo == p.algo) r = static_cast<int>(j);
    }
    rank.push_back(r);
  }
  const auto i = static_cast<std::ptrdiff_t>(near_tie_leader(ms, ran, rank, kConvNearTie));
  std::rotate(perfs.begin(), perfs.begin() + i, perfs.begin() + i + 1);
}

}  // namespace

// Scratch X, W and Y are filled with a non-zero pattern (timing on zeros can flatter a kernel);
// every buffer is freed before the plan goes on.
TimedCandidates timed_candidates(const Search& search, ConvDirection dir, const ConvDescriptors& d,
                                 size_t workspace_limit) {
  const CudaContext& ctx = search.context();
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
  const DeviceMemory x = device_alloc(ctx, x_bytes, "cudaMalloc (search X)");
  const DeviceMemory w = device_alloc(ctx, w_bytes, "cudaMalloc (search W)");
  const DeviceMemory y = device_alloc(ctx, y_bytes, "cudaMalloc (search Y)");

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

  fill_search_pattern(ctx, x.get(), x_bytes);
  fill_search_pattern(ctx, w.get(), w_bytes);
  fill_search_pattern(ctx, y.get(), y_bytes);  // dY backward
  check(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize");
  wait_for_quiet(ctx);  // Note [background search]: Find runs every candidate once
  out.perfs = find_candidates(ctx, dir, d, x.get(), w.get(), y.get(), workspace.get(), out.search_workspace);
  retime(search, dir, d, x.get(), w.get(), y.get(), workspace.get(), out.search_workspace, out.perfs);
  prefer_heuristic_on_near_ties(ranked, out.perfs);
  search.count_timing_run();
  return out;
}

}  // namespace dnnx::cuda
