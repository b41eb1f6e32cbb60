// Note [one search]: every algorithm choice the CUDA planner makes by measurement goes through
// one protocol, owned here (docs/architecture.md, "Algorithm search"):
//   1. the policy      algo_search="heuristic" ranks and takes; "exhaustive" times (timed(): the
//                      only reader of options.algo_search)
//   2. the plan cache  exhaustive choices only: the kind judges its entry (use it, drop it as
//                      stale with a warning, or pass it by for now); the choice is stored after
//                      a search (cached, store; counted in the planner's stats)
//   3. the timing      the candidates in rank order, each readied and run by the kind, timed by
//                      one policy (time: device_timing.h's warm-up and rounds)
//   4. the pick        by the kind's rule over the times, each rule kept in pick.h
//   5. the losers      kept as TimedRejected: the plan's reason (reasons.h: one time text) and
//                      the time as a number, which the cache keeps as a number
// The kinds that plug in: cuDNN's algorithms in each direction (conv_algo.cc, its candidates in
// conv_candidates.cc), the planner's own conv kernel against cuDNN's choice (conv_cuda.cc),
// the direct conv+pool kernel against the pair (conv_pool_cuda.cc), cuBLASLt's candidates
// (lt_search.cc). A Search is built from the context where a layer is planned; it holds nothing
// the context does not.
#pragma once
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/backend/cuda_context.h"
#include "backends/cuda/search/device_timing.h"
#include "backends/cuda/search/plan_cache.h"

namespace dnnx::cuda {

// What a kind says of the entry the cache holds for its key.
struct CacheVerdict {
  enum Kind { Use, Stale, NotNow };
  Kind kind = Use;
  std::string warning;  // Stale: the planner's warning, in the kind's words

  static CacheVerdict use() { return {}; }
  static CacheVerdict stale(std::string warning) { return {Stale, std::move(warning)}; }
  // Valid, but not usable at this moment (e.g. its workspace cannot be allocated now): kept in
  // the file, searched again without counting a hit, a miss or a stale entry.
  static CacheVerdict not_now() { return {NotNow, ""}; }
};

// A kernel of the planner's own that a search times on scratch buffers of these sizes (inputs
// filled with the search pattern, device_timing.h).
struct ScratchCandidate {
  const Kernel* kernel = nullptr;
  std::vector<size_t> input_bytes, output_bytes;
  size_t workspace_bytes = 0;
};

class Search {
 public:
  // The policy of algo_search: timed only for "exhaustive" (kinds with no rule for "auto").
  explicit Search(const CudaContext& ctx);
  // A search whose kind decided itself whether to time (Note [auto search], conv_algo.cc).
  Search(const CudaContext& ctx, bool timed);

  const CudaContext& context() const { return ctx_; }
  // Whether the candidates are timed: algo_search="exhaustive", or the kind's "auto" rule.
  bool timed() const { return timed_; }
  // "exhaustive" or "heuristic", as plan-cache keys name the policy ("background" reads the
  // exhaustive entries: Note [background search], search.cc).
  const char* policy_name() const { return timed_ || cache_ ? "exhaustive" : "heuristic"; }
  // Whether choices are read from the plan cache: exhaustive searches with a cache file
  // (heuristic choices cost nothing to redo), and "background" plans. Only timed searches write.
  bool caching() const { return cache_ != nullptr; }

  // The entry under `key` that `judge` lets the search use ("cache_hits"). A stale one is dropped
  // with the kind's warning ("cache_stale"), and so is one that is no `Entry` at all (a record
  // another kind or version wrote); no entry is "cache_misses". Entry (plan_entries.h) converts
  // with from_record and record. nullopt without a cache.
  template <class Entry>
  std::optional<Entry> cached(const std::string& key, const std::function<CacheVerdict(const Entry&)>& judge) const;
  // Writes the choice of a search ("cache_writes").
  template <class Entry>
  void store(const std::string& key, const Entry& entry) const;
  // Adds `note` to the rejected list of the entry under `key`, when there is one: a second kind
  // timed against that entry's choice (conv_cuda.cc's own kernel). Not a new choice: not counted.
  void annotate(const std::string& key, const TimedRejected& note) const;

  // Times `count` candidates by the one policy (time_candidates, device_timing.h): `prepare(i)`
  // readies candidate i and says whether it can be timed, `run(i)` queues it once (false: it
  // cannot run). Counts nothing: a kind counts its "timing_runs".
  CandidateTimes time(size_t count, const std::function<bool(size_t)>& prepare, const std::function<bool(size_t)>& run,
                      const char* what) const;
  // The same for kernels of the planner's own on scratch buffers: the times, -1 for a candidate
  // whose buffers cannot be had (each candidate's buffers live while it is timed).
  std::vector<double> time_on_scratch(const std::vector<ScratchCandidate>& candidates, const char* what) const;
  // One "timing_runs": a search that timed candidates on the GPU.
  void count_timing_run() const;
  // Adds the wall time since `start` to "search_seconds".
  void count_seconds_since(std::chrono::steady_clock::time_point start) const;

 private:
  // The record under `key`, or nullopt counting "cache_misses".
  std::optional<PlanRecord> find_or_miss(const std::string& key) const;
  void count_hit() const;
  // Drops the entry under `key` with `warning` ("cache_stale").
  void drop_stale(const std::string& key, const std::string& warning) const;

  const CudaContext& ctx_;
  bool timed_;
  PlanCache* cache_;
};

template <class Entry>
std::optional<Entry> Search::cached(const std::string& key,
                                    const std::function<CacheVerdict(const Entry&)>& judge) const {
  if (!cache_) return std::nullopt;
  const std::optional<PlanRecord> record = find_or_miss(key);
  if (!record) return std::nullopt;
  std::optional<Entry> entry = Entry::from_record(*record);
  const CacheVerdict verdict =
      entry ? judge(*entry)
            : CacheVerdict::stale("a stale plan-cache entry (" + key + ": " + record->algorithm + ") was dropped: it lacks " +
                                  Entry::kWhat + "; searched again");
  if (verdict.kind == CacheVerdict::Use) {
    count_hit();
    return entry;
  }
  if (verdict.kind == CacheVerdict::Stale) drop_stale(key, verdict.warning);
  return std::nullopt;
}

template <class Entry>
void Search::store(const std::string& key, const Entry& entry) const {
  if (!cache_ || !timed_) return;
  cache_->store(key, entry.record());
  ctx_.stats->count("cache_writes");
}

}  // namespace dnnx::cuda
