#include "backends/cuda/search/conv_candidates.h"

#include <algorithm>
#include <cstdio>

#include "backends/cuda/search/pick.h"

namespace dnnx::cuda {

bool try_plan_alloc(const CudaContext& ctx, size_t bytes, DeviceMemory& out) {
  if (plan_alloc_once(ctx, bytes, out)) return true;
  return release_idle_search_scratch(ctx) && plan_alloc_once(ctx, bytes, out);  // Note [search scratch]
}

namespace {

// Note [search parts]: search_seconds (the planner's stats, Model.planner_stats()) is split into
// the parts a cold load waits on, so that a slow load says where its time went:
//   "search_seconds: heuristics"       cuDNN's ranked lists (cudnnGet*Algorithm_v7)
//   "search_seconds: workspace sizes"  cuDNN's workspace queries
//   "search_seconds: find"             cudnnFind*AlgorithmEx: every candidate run once
//   "search_seconds: retime"           the warm re-timing (Note [warm conv timing])
//   "search_seconds: scratch"          the search buffers' allocation (Note [search scratch])
//   "search_seconds: own kernels"      the planner's own conv kernels timed against cuDNN's pick
//   "search_seconds: cublaslt"         cuBLASLt's candidates timed (lt_search.cc)
// The first two count cuDNN's answers only, not those the process had kept (Note [conv query
// memo], conv_direction.cc). The parts do not sum to the total: the rest is the choice's own
// bookkeeping and the plan cache. Nor are they disjoint: a part counted inside another's clock
// (a candidate's scratch inside an own kernel's timing) counts in both.

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
// and where cold times mislead most) re-time every candidate below kRetimeAllBelowMs, and those
// within kRetimeNearReach of the fastest up to kRetimeNearBelowMs. DNNX_PROBE_RETIME_ALL=1
// restores the full re-timing (test_hooks.h), for a probe to compare.
// The reach was 2.0 until the cold-load bench weighed it (DNNX_PROBE_RETIME_REACH, ResNet-50 at
// batch 256, fp32 "auto", an H100, 2026-12-06, one process each): reach 2.0 loaded in 3.73 s
// (2.56 s of search) and ran at 48.91 ms, reach 1.2 in 3.13 s (1.96) at 48.93, and no re-timing of
// these layers in 2.48 s (1.26) at 48.82. Find's own times rank the large layers as well as the
// re-timing did, so they stand: kRetimeReach 0 re-times none of them.
// The layers from 0.1 to 0.5 ms re-timed every candidate until the same bench split the search
// into its parts (Note [search parts]; DNNX_PROBE_RETIME_SMALL_REACH, an H100, 2026-12-06, the
// same call): re-timing them all took 348 ms of the load and ran at 48.69 ms; within 2x of the
// fastest 216 ms at 48.75, within 1.5x 214 ms at 48.90. So they re-time within 2x.
// Find itself is mostly host work: py-spy over that cold load (session 13) put 55-60% of Find's
// samples in the execution plans' finalize (cuBLASLt's heuristics and library loads among them).
// Timing only the head of cuDNN's ranked list instead (its first 4 algorithms, warm, never
// finalizing the rest) measured worse on both counts, in the same call: load + first run 3.98 s
// against 1.78 with Find, the search's re-timing 2.67 s (slow candidates timed warm many times
// over), and the choices ran at 52.8 ms against 48.9 (the list's head missed the fastest). Find
// stays.
// Nor can Find's host work be moved off the load's path (bench/probes/cudnn_find_prewarm, an
// H100, session 14, ResNet-50's 23 conv shapes at batch 256, fp32, a new process a mode): Find
// alone took 0.75-0.77 s. Asking every algorithm's workspace first made Find 0.43-0.45 s (cuDNN
// keeps the plans it finalizes, across handles too), but the queries took 0.23-0.29 s on one
// handle and 0.32-0.33 s spread over 8 threads with a handle each: cuDNN finalizes one plan at a
// time, so the sum stays (0.66-0.79 s). In dnnx's cold load the same threads made it 1.73 s against
// 1.62 (Find 444 ms + 186 ms of queries, against Find's 587). Not kept.
constexpr float kRetimeAllBelowMs = 0.1f;
constexpr float kRetimeNearBelowMs = 0.5f;
constexpr float kRetimeNearReach = 2.0f;
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
  const float reach = best < kRetimeNearBelowMs
                          ? (ctx.hooks.retime_small_reach >= 0 ? ctx.hooks.retime_small_reach : kRetimeNearReach)
                          : (ctx.hooks.retime_reach >= 0 ? ctx.hooks.retime_reach : kRetimeReach);
  auto prepare = [&](size_t i) {  // the math type it runs with, and a workspace within the search's
    if (perfs[i].status != CUDNN_STATUS_SUCCESS) return false;
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
    ran.push_back(p.status == CUDNN_STATUS_SUCCESS && p.time >= 0);  // untimed: last
  }
  std::vector<ConvCandidate> sorted;
  for (size_t i : fastest_first(ms, ran)) sorted.push_back(perfs[i]);
  perfs = std::move(sorted);
}

// Near-ties go to cuDNN's heuristic order: the first candidate of cuDNN's ranked list whose
// re-timed time is within kConvNearTie of the fastest moves to the front (pick.h says why). The
// list is asked for only when a second candidate is that close (Note [conv query memo]: each new
// shape's list costs milliseconds of host time).
// `asked`: the math type the search was asked for (the re-timing left the descriptor at its last
// candidate's); cuDNN ranks for that one, as it did before the search.
void prefer_heuristic_on_near_ties(const CudaContext& ctx, ConvDirection dir, const ConvDescriptors& d,
                                   cudnnMathType_t asked, std::vector<ConvCandidate>& perfs) {
  if (perfs.empty() || perfs[0].status != CUDNN_STATUS_SUCCESS || perfs[0].time <= 0) return;
  const bool tie = std::any_of(perfs.begin() + 1, perfs.end(), [&](const ConvCandidate& p) {
    return p.status == CUDNN_STATUS_SUCCESS && p.time > 0 && p.time <= kConvNearTie * perfs[0].time;
  });
  if (!tie) return;
  check(cudnnSetConvolutionMathType(d.conv, asked), "cudnnSetConvolutionMathType");
  const std::vector<ConvCandidate> ranked = heuristic_candidates(ctx, dir, d);
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

// The search workspace, held in `scratch`: the whole limit, which the scratch keeps for the plan's
// next searches, so that no candidate's need is asked of cuDNN before Find (the first query of
// each shape and algorithm took 163 ms of ResNet-50's cold load at batch 256, an H100,
// 2026-12-06). Where the limit cannot be had, the largest need that can, each smaller retry noted.
void hold_search_workspace(const CudaContext& ctx, ConvDirection dir, const ConvDescriptors& d, size_t workspace_limit,
                           SearchScratch& scratch, TimedCandidates& out) {
  {
    const StatsClock clock(*ctx.stats, "search_seconds: scratch");
    if (scratch.hold(ctx, SearchScratch::kWorkspace, workspace_limit)) {
      out.search_workspace = workspace_limit;
      return;
    }
  }
  std::vector<size_t> needs;  // each algorithm's workspace within the limit
  for (int algo = 0; algo < conv_algo_count(ctx, dir); ++algo) {
    size_t need = 0;
    if (conv_workspace_size(ctx, dir, d, algo, &need) == CUDNN_STATUS_SUCCESS && need <= workspace_limit) {
      needs.push_back(need);
    }
  }
  size_t ceiling = workspace_limit;
  while (true) {
    out.search_workspace = 0;
    for (size_t need : needs) {
      if (need <= ceiling) out.search_workspace = std::max(out.search_workspace, need);
    }
    const StatsClock clock(*ctx.stats, "search_seconds: scratch");
    if (scratch.hold(ctx, SearchScratch::kWorkspace, out.search_workspace)) return;
    out.notes.push_back({"search workspace", mib_text(out.search_workspace) +
                                                 " could not be allocated (out of memory); searched within less"});
    ceiling = out.search_workspace - 1;  // > 0: a zero-byte workspace always "allocates"
  }
}

}  // namespace

// Scratch X, W and Y are filled with a non-zero pattern (timing on zeros can flatter a kernel);
// the context keeps them for the next layer (Note [search scratch]).
TimedCandidates timed_candidates(const Search& search, ConvDirection dir, const ConvDescriptors& d,
                                 size_t workspace_limit) {
  const CudaContext& ctx = search.context();
  cudnnMathType_t asked{};  // before Find and the re-timing set each candidate's
  check(cudnnGetConvolutionMathType(d.conv, &asked), "cudnnGetConvolutionMathType");
  size_t x_bytes = 0, w_bytes = 0, y_bytes = 0;
  check(cudnnGetTensorSizeInBytes(d.x, &x_bytes), "cudnnGetTensorSizeInBytes");
  check(cudnnGetFilterSizeInBytes(d.w, &w_bytes), "cudnnGetFilterSizeInBytes");
  check(cudnnGetTensorSizeInBytes(d.y, &y_bytes), "cudnnGetTensorSizeInBytes");
  // X, W and Y from the context's scratch (Note [search scratch]); where it cannot hold them, all
  // of it goes and the search allocates its own, as a DeviceError if even that fails.
  SearchScratch& scratch = *ctx.search_scratch;
  const SearchScratch::Busy busy(scratch);
  DeviceMemory own_x, own_w, own_y;
  void *x = nullptr, *w = nullptr, *y = nullptr;
  {
    StatsClock clock(*ctx.stats, "search_seconds: scratch");
    if (scratch.hold(ctx, SearchScratch::kX, x_bytes) && scratch.hold(ctx, SearchScratch::kW, w_bytes) &&
        scratch.hold(ctx, SearchScratch::kY, y_bytes)) {
      x = scratch.get(SearchScratch::kX), w = scratch.get(SearchScratch::kW), y = scratch.get(SearchScratch::kY);
    } else {
      scratch.release();
      own_x = device_alloc(ctx, x_bytes, "cudaMalloc (search X)");
      own_w = device_alloc(ctx, w_bytes, "cudaMalloc (search W)");
      own_y = device_alloc(ctx, y_bytes, "cudaMalloc (search Y)");
      x = own_x.get(), w = own_w.get(), y = own_y.get();
    }
  }

  TimedCandidates out;
  hold_search_workspace(ctx, dir, d, workspace_limit, scratch, out);
  void* workspace = scratch.get(SearchScratch::kWorkspace);

  fill_search_pattern(ctx, x, x_bytes);
  fill_search_pattern(ctx, w, w_bytes);
  fill_search_pattern(ctx, y, y_bytes);  // dY backward
  check(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize");
  wait_for_quiet(ctx);  // Note [background search]: Find runs every candidate once
  {
    StatsClock clock(*ctx.stats, "search_seconds: find");
    out.perfs = find_candidates(ctx, dir, d, x, w, y, workspace, out.search_workspace);
  }
  {
    StatsClock clock(*ctx.stats, "search_seconds: retime");
    retime(search, dir, d, x, w, y, workspace, out.search_workspace, out.perfs);
  }
  prefer_heuristic_on_near_ties(ctx, dir, d, asked, out.perfs);
  search.count_timing_run();
  return out;
}

}  // namespace dnnx::cuda
