// The exhaustive choice among cuBLASLt's candidates: Note [GEMM candidates] in lt_search.h.
#include "backends/cuda/search/lt_search.h"

#include <algorithm>
#include <chrono>

#include "backends/cuda/search/conv_candidates.h"  // try_plan_alloc
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/search/pick.h"
#include "backends/cuda/search/plan_entries.h"
#include "backends/cuda/search/reasons.h"
#include "backends/cuda/search/search.h"

namespace dnnx::cuda {

namespace {

// The epilogues that read or write a vector through the bias pointer.
bool has_bias(cublasLtEpilogue_t e) {
  return e == CUBLASLT_EPILOGUE_BIAS || e == CUBLASLT_EPILOGUE_RELU_BIAS || e == CUBLASLT_EPILOGUE_GELU_BIAS ||
         e == CUBLASLT_EPILOGUE_BGRADA || e == CUBLASLT_EPILOGUE_BGRADB;
}

std::string candidate_name(int rank) { return "cuBLASLt candidate " + std::to_string(rank + 1); }

// Scratch operands of the GEMM's shapes, filled with a non-zero pattern (never time on zeros).
struct GemmScratch {
  DeviceMemory a, b, y, bias, workspace;
  size_t workspace_bytes = 0;
};

bool allocate(const CudaContext& ctx, const GemmCall& c, bool bias, size_t workspace_bytes, GemmScratch& s) {
  const size_t elem = dtype_size(c.dtype);
  // The bias vector: N for the bias epilogues, M or N for the bias-gradient ones.
  const size_t a = elem * c.m * c.k, b = elem * c.k * c.n, y = elem * c.m * c.n,
               v = bias ? elem * std::max(c.m, c.n) : 0;
  if (!try_plan_alloc(ctx, a, s.a) || !try_plan_alloc(ctx, b, s.b) || !try_plan_alloc(ctx, y, s.y) ||
      !try_plan_alloc(ctx, v, s.bias)) {
    return false;
  }
  fill_search_pattern(ctx, s.a.get(), a);
  fill_search_pattern(ctx, s.b.get(), b);
  fill_search_pattern(ctx, s.bias.get(), v);
  // The largest workspace that allocates (a candidate needing more is then not timed).
  s.workspace_bytes = workspace_bytes;
  while (!try_plan_alloc(ctx, s.workspace_bytes, s.workspace)) s.workspace_bytes /= 2;
  return true;
}

// The candidates timed, the pick by the take-over rule (kLtTakeOver, pick.h), the others rejected
// with their times.
LtChoice time_and_pick(const Search& search, const LtMatmul& lt, const GemmCall& c, cublasLtEpilogue_t epilogue,
                       const std::vector<cublasLtMatmulHeuristicResult_t>& list) {
  const CudaContext& ctx = search.context();
  LtChoice choice;
  choice.listed = static_cast<int>(list.size());
  size_t most = 0;
  for (const auto& r : list) most = std::max(most, r.workspaceSize);
  GemmScratch s;
  if (!allocate(ctx, c, has_bias(epilogue), most, s)) {
    choice.rejected.emplace_back("timing", "scratch operands could not be allocated (out of memory): the heuristic's pick");
    return choice;
  }
  auto fits = [&](size_t i) { return list[i].workspaceSize <= s.workspace_bytes; };
  auto run = [&](size_t i) {
    try {
      lt.run_candidate(ctx, c, list[i], s.a.get(), s.b.get(), s.bias.get(), s.y.get(), s.workspace.get());
      return true;
    } catch (const DeviceError&) {
      cudaGetLastError();  // a candidate cuBLASLt listed but would not run: not sticky
      return false;
    }
  };
  const std::vector<double> times = search.time(list.size(), fits, run, "cublasLtMatmul (search)").ms;
  const int best = pick_fastest(times, kLtTakeOver);
  search.count_timing_run();
  if (best < 0) {
    choice.rejected.emplace_back("timing", "no candidate ran: the heuristic's pick");
    return choice;
  }
  choice.rank = best;
  choice.time_ms = times[best];
  const std::string winner = candidate_name(best);
  for (size_t i = 0; i < list.size(); ++i) {
    if (static_cast<int>(i) == best) continue;
    std::string why;
    if (times[i] < 0) {
      why = list[i].workspaceSize > s.workspace_bytes ? "its workspace could not be allocated" : "failed to run";
    } else {
      why = times[i] < times[best] ? within_near_tie(times[i], winner, times[best])
                                   : slower_than(times[i], winner, times[best]);
    }
    choice.rejected.emplace_back(candidate_name(static_cast<int>(i)), why, times[i]);
  }
  return choice;
}

}  // namespace

std::string lt_cache_key(const CudaContext& ctx, const GemmCall& c, cublasLtEpilogue_t epilogue,
                         size_t workspace_limit) {
  const bool tf32 = ctx.options.precision == Precision::Tf32 && !c.half();
  const char* storage = c.half() ? half_storage_name(c.dtype) : "fp32";
  return "gemm | " + ctx.device_name + " sm_" + std::to_string(ctx.compute_capability) + " cuBLASLt " +
         std::to_string(cublasLtGetVersion()) + " | " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
         std::to_string(c.k) + " ta " + (c.trans_a ? "1" : "0") + " tb " + (c.trans_b ? "1" : "0") + " | " +
         storage + " compute " + (tf32 ? "32F_FAST_TF32" : "32F") + " | epilogue " +
         std::to_string(static_cast<int>(epilogue)) + " | workspace limit " + std::to_string(workspace_limit);
}

LtChoice choose_lt_candidate(const Search& search, const LtMatmul& lt, const GemmCall& c,
                             cublasLtEpilogue_t epilogue, size_t workspace_limit,
                             const std::vector<cublasLtMatmulHeuristicResult_t>& list) {
  const auto start = std::chrono::steady_clock::now();
  const std::string key = search.caching() ? lt_cache_key(search.context(), c, epilogue, workspace_limit) : "";
  // The cached rank is used while cuBLASLt still lists a candidate there with the same workspace.
  const std::optional<GemmEntry> cached = search.cached<GemmEntry>(key, [&](const GemmEntry& e) {
    const bool listed = e.rank >= 0 && e.rank < static_cast<int>(list.size()) &&
                        list[static_cast<size_t>(e.rank)].workspaceSize == e.workspace_bytes;
    return listed ? CacheVerdict::use()
                  : CacheVerdict::stale("a stale plan-cache entry (" + key + ": " + e.algorithm +
                                        ") was dropped: cuBLASLt now lists another workspace or fewer candidates; "
                                        "the GEMM was timed again");
  });
  if (cached) {
    LtChoice choice;
    choice.rank = cached->rank;
    choice.listed = static_cast<int>(list.size());
    choice.time_ms = cached->time_ms;
    choice.from_cache = true;
    choice.rejected = cached->rejected;
    return choice;
  }
  if (!search.timed()) return LtChoice{};  // "background" without an entry: the heuristic's pick
  LtChoice choice;
  {
    const StatsClock part(*search.context().stats, "search_seconds: cublaslt");  // Note [search parts]
    choice = time_and_pick(search, lt, c, epilogue, list);
  }
  if (search.caching() && choice.time_ms >= 0) {
    GemmEntry e;
    e.rank = choice.rank;
    e.workspace_bytes = list[static_cast<size_t>(choice.rank)].workspaceSize;
    e.time_ms = choice.time_ms;
    e.algorithm = candidate_name(choice.rank) + " of " + std::to_string(choice.listed);
    e.rejected = choice.rejected;
    search.store(key, e);
  }
  search.count_seconds_since(start);
  return choice;
}

}  // namespace dnnx::cuda
