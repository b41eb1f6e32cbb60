// The persistent plan cache (docs/architecture.md, "The plan cache"): the convolution algorithms, the
// direct-or-pair choices of conv+pool layers and the cuBLASLt candidates (lt_search.h: "algo" is
// the candidate's rank in cuBLASLt's list) that an exhaustive search chose, in a JSON file shared
// by every process of the user, so that a second process loading the same model times nothing.
//
//   {"format": "dnnx plan cache 1",
//    "entries": {"<key>": {"algo": 1, "algorithm": "IMPLICIT_PRECOMP_GEMM", "math_type": 2,
//                          "math": "fp32 (CUDNN_FMA_MATH)", "workspace": 0, "time_ms": 0.0123,
//                          "rejected": [["GEMM", "0.0150 ms, slower than ..."], ...],
//                          "rejected_ms": [0.0150123, ...]}}}
//
// Every kind of choice is written as this one record (PlanRecord; the typed entries of each kind,
// plan_entries.h, convert to and from it). "rejected_ms" holds each rejected candidate's measured
// time as a number (-1: not timed), beside the [name, reason] pairs the plan shows, so that no
// reader parses a time out of a reason. Files of the same format written before it existed
// (rejected as pairs only) still load: their times are derived once, here in the reader, by the
// rule those writers read them back with (the number a reason starts with, before " ms");
// entries written from then on carry the numbers. The format name stays "dnnx plan cache 1":
// the new member is one an older reader ignores. (Such a reader finds the times it parses with
// the plan's four decimals now; at worst it times a layer again: the cache only saves time.)
//
// A key names everything the choice depends on (conv_cache_key.h, lt_cache_key in lt_search.h):
// GPU, compute capability, library version, the layer's full descriptors or GEMM shape, math or
// compute type, determinism, workspace limit, direction.
// The file is read once when the model opens; every store takes an exclusive lock on
// "<path>.lock", re-reads the file, merges and writes a temporary file renamed over the old one,
// so that concurrent writers (processes included) never leave a torn file and never lose each
// other's entries (the last writer of one key wins; Note [plan cache lock] in plan_cache.cc). The JSON is read and written by nlohmann/json. A file that
// cannot be read or written costs a warning and a search, never an error: the cache only saves
// time. Entries are hints: each kind re-validates its entry before use (Search::cached, search.h).
#pragma once
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/cuda/backend/planner_stats.h"
#include "runtime/backend.h"

namespace dnnx::cuda {

// A candidate that lost, as the plan shows it (Rejected) and with its measured time as a number
// (-1: not timed, or not a time at all: a reason why it could not run).
struct TimedRejected : Rejected {
  double time_ms = -1;
  TimedRejected() = default;
  TimedRejected(std::string name, std::string why, double ms = -1) : Rejected{std::move(name), std::move(why)}, time_ms(ms) {}
};

// The plan rows' view of a list of them: names and reasons.
std::vector<Rejected> plain(const std::vector<TimedRejected>& rejected);

// One entry of the file, whatever chose it (plan_entries.h gives each kind's meaning of the fields).
struct PlanRecord {
  int algo = 0;       // the choice: a cuDNN algorithm enum, a cuBLASLt rank, direct-or-pair
  int math_type = 0;  // cudnnMathType_t the algorithm ran with (convolutions)
  size_t workspace_bytes = 0;
  double time_ms = -1;
  std::string algorithm;  // its name, for people reading the file
  std::string math;
  std::vector<TimedRejected> rejected;  // the candidates it beat, as the search saw them
};

class PlanCache {
 public:
  // Reads `path` (a missing file is an empty cache); problems are warnings in `stats`.
  PlanCache(std::string path, PlannerStats& stats);

  const std::string& path() const { return path_; }
  std::string lock_path() const;  // "<path>.lock": what every store locks
  std::optional<PlanRecord> find(const std::string& key) const;
  // Adds or replaces the entry in memory and in the file.
  void store(const std::string& key, const PlanRecord& entry);
  // Removes a stale entry from memory and from the file.
  void drop(const std::string& key);

 private:
  // Re-reads the file, applies `key` -> `entry` (or removes `key` when entry is null), writes it.
  void write_through(const std::string& key, const nlohmann::json* entry);
  nlohmann::json read_entries(bool warn) const;

  std::string path_;
  PlannerStats& stats_;
  mutable std::mutex mutex_;
  nlohmann::json entries_ = nlohmann::json::object();  // key -> entry (keys sorted: stable files)
};

}  // namespace dnnx::cuda
