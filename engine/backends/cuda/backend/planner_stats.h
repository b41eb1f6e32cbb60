// The CUDA planner's counters and pending warnings for one model (Backend::planner_report):
//   timing_runs     exhaustive searches that timed candidates on the GPU
//                   (cudnnFind*AlgorithmEx calls, forward and backward)
//   cache_hits      choices taken from the persistent plan cache, re-validated
//   cache_misses    exhaustive choices the cache did not hold
//   cache_stale     cache entries that failed re-validation and were dropped (with a warning)
//   cache_writes    choices written to the cache file
//   search_seconds  wall time spent choosing algorithms (convolutions, cuBLASLt GEMMs, the
//                   planner's own kernels)
//   timings_retaken a background searcher's timings that a request overlapped, taken again
//                   (Note [background search], device_timing.cc)
//   quiet_waits_given_up  a background searcher's waits for an idle device that gave up (runs
//                   back to back): it timed beside the runs, at its lower stream priority
//   plan_seconds: OP  wall time spent planning the layers of op type OP (searches included)
//   search_seconds: PART  where search_seconds went: heuristics, workspace sizes, find, retime,
//                   scratch, own kernels, cublaslt (Note [search parts], conv_candidates.cc)
// Planning runs one layer at a time, but Python may read the report from another thread.
#pragma once
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/backend.h"

namespace dnnx::cuda {

class PlannerStats {
 public:
  void count(const std::string& name, double delta = 1) {
    std::lock_guard<std::mutex> lock(mutex_);
    counters_[name] += delta;
  }
  void warn(std::string message) {
    std::lock_guard<std::mutex> lock(mutex_);
    warnings_.push_back(std::move(message));
  }
  // The counters (every one named above, zeros included) and the warnings, which are cleared.
  PlannerReport take_report(const std::string& cache_path) {
    std::lock_guard<std::mutex> lock(mutex_);
    PlannerReport report;
    for (const char* name : {"timing_runs", "cache_hits", "cache_misses", "cache_stale", "cache_writes",
                             "search_seconds", "timings_retaken", "quiet_waits_given_up"}) {
      report.counters[name] = 0;
    }
    for (const auto& kv : counters_) report.counters[kv.first] = kv.second;
    report.warnings.swap(warnings_);
    report.cache_path = cache_path;
    return report;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, double> counters_;
  std::vector<std::string> warnings_;
};

// Adds the wall time of its scope to one counter of `stats` (a "search_seconds: PART").
class StatsClock {
 public:
  StatsClock(PlannerStats& stats, const char* counter)
      : stats_(stats), counter_(counter), start_(std::chrono::steady_clock::now()) {}
  ~StatsClock() {
    stats_.count(counter_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
  StatsClock(const StatsClock&) = delete;
  StatsClock& operator=(const StatsClock&) = delete;

 private:
  PlannerStats& stats_;
  const char* counter_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace dnnx::cuda
