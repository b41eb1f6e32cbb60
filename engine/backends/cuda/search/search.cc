#include "backends/cuda/search/search.h"

#include <memory>

#include "backends/cuda/search/conv_candidates.h"  // try_plan_alloc

namespace dnnx::cuda {

Search::Search(const CudaContext& ctx) : Search(ctx, ctx.options.algo_search == AlgoSearch::Exhaustive) {}

// Note [background search]: algo_search="background" reads the exhaustive choices a searcher
// engine stored, and times nothing itself (timed_ false, the cache read).
Search::Search(const CudaContext& ctx, bool timed)
    : ctx_(ctx),
      timed_(timed),
      cache_(timed_ || ctx.options.algo_search == AlgoSearch::Background ? ctx.plan_cache.get() : nullptr) {}

std::optional<PlanRecord> Search::find_or_miss(const std::string& key) const {
  std::optional<PlanRecord> record = cache_->find(key);
  if (!record) ctx_.stats->count("cache_misses");
  return record;
}

void Search::count_hit() const { ctx_.stats->count("cache_hits"); }

void Search::drop_stale(const std::string& key, const std::string& warning) const {
  cache_->drop(key);
  ctx_.stats->count("cache_stale");
  ctx_.stats->warn(warning);
}

void Search::annotate(const std::string& key, const TimedRejected& note) const {
  if (!cache_ || !timed_) return;
  if (std::optional<PlanRecord> record = cache_->find(key)) {
    record->rejected.push_back(note);
    cache_->store(key, *record);
  }
}

CandidateTimes Search::time(size_t count, const std::function<bool(size_t)>& prepare,
                            const std::function<bool(size_t)>& run, const char* what) const {
  return time_candidates(ctx_, count, prepare, run, what);
}

namespace {

// One candidate's scratch buffers and arguments, freed when the next candidate's are made.
struct Scratch {
  std::vector<DeviceMemory> buffers;
  std::vector<const void*> ins;
  std::vector<void*> outs;
  DeviceMemory workspace;

  // false when a buffer cannot be had (for want of memory, or by DNNX_TEST_OOM_ABOVE).
  bool allocate(const CudaContext& ctx, const ScratchCandidate& c) {
    buffers.resize(c.input_bytes.size() + c.output_bytes.size());
    for (size_t i = 0; i < buffers.size(); ++i) {
      const bool input = i < c.input_bytes.size();
      const size_t bytes = input ? c.input_bytes[i] : c.output_bytes[i - c.input_bytes.size()];
      if (!try_plan_alloc(ctx, bytes, buffers[i])) return false;
      if (input) {
        fill_search_pattern(ctx, buffers[i].get(), bytes);
        ins.push_back(buffers[i].get());
      } else {
        outs.push_back(buffers[i].get());
      }
    }
    return try_plan_alloc(ctx, c.workspace_bytes, workspace);
  }
};

}  // namespace

std::vector<double> Search::time_on_scratch(const std::vector<ScratchCandidate>& candidates, const char* what) const {
  const auto start = std::chrono::steady_clock::now();  // in search_seconds, and apart (Note [search parts])
  const StatsClock part(*ctx_.stats, "search_seconds: own kernels");
  std::unique_ptr<Scratch> scratch;  // the buffers of candidate `ready`
  size_t ready = candidates.size();
  auto prepare = [&](size_t i) {
    if (i == ready) return true;
    scratch.reset();  // one candidate's buffers at a time: the peak of timing one alone
    ready = candidates.size();
    auto s = std::make_unique<Scratch>();
    if (!s->allocate(ctx_, candidates[i])) return false;
    scratch = std::move(s);
    ready = i;
    return true;
  };
  auto run = [&](size_t i) {
    candidates[i].kernel->run(KernelArgs{scratch->ins.data(), scratch->outs.data(), scratch->workspace.get()});
    return true;
  };
  std::vector<double> ms = time(candidates.size(), prepare, run, what).ms;
  count_seconds_since(start);
  return ms;
}

void Search::count_timing_run() const { ctx_.stats->count("timing_runs"); }

void Search::count_seconds_since(std::chrono::steady_clock::time_point start) const {
  ctx_.stats->count("search_seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace dnnx::cuda
