// The plan cache's entries of each kind (plan_cache.h), typed, with their times as numbers. Each
// converts to the one record the file holds (record) and back (from_record: nullopt when the
// record cannot be an entry of this kind; Search::cached drops it as stale).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/search/plan_cache.h"

namespace dnnx::cuda {

// cuDNN's algorithm for one convolution in one direction (conv_algo.h). The planner's own kernel
// timed against it (conv_cuda.cc) is one of `rejected`, under its name, with its time.
struct ConvAlgoEntry {
  static constexpr const char* kWhat = "a cuDNN algorithm";
  int algo = 0;       // the cuDNN algorithm enum of the key's direction (fwd, bwd data, bwd filter)
  int math_type = 0;  // cudnnMathType_t the algorithm ran with
  size_t workspace_bytes = 0;
  double time_ms = -1;
  std::string algorithm;  // its name, for people reading the file
  std::string math;
  std::vector<TimedRejected> rejected;  // the candidates it beat, as the search saw them

  PlanRecord record() const;
  static std::optional<ConvAlgoEntry> from_record(const PlanRecord& r);
};

// The direct conv+pool kernel or the pair (conv_pool_cuda.cc), with both times: the winner's is
// the record's time, the loser is its one rejected candidate.
struct ConvPoolEntry {
  static constexpr const char* kWhat = "the times of both the direct kernel and the pair";
  bool direct = false;  // the record's algo: 1 direct, 0 the pair
  double direct_ms = -1, pair_ms = -1;
  std::string direct_name, pair_name;  // the pair's is its algorithm, as the plan showed it

  PlanRecord record() const;
  // Both times must be there (>= 0).
  static std::optional<ConvPoolEntry> from_record(const PlanRecord& r);
};

// The cuBLASLt candidate of one GEMM (lt_search.h), by its rank in cuBLASLt's list.
struct GemmEntry {
  static constexpr const char* kWhat = "a cuBLASLt rank";
  int rank = 0;
  size_t workspace_bytes = 0;  // the candidate's, as listed
  double time_ms = -1;
  std::string algorithm;  // "cuBLASLt candidate 3 of 8", for people reading the file
  std::vector<TimedRejected> rejected;

  PlanRecord record() const;
  static std::optional<GemmEntry> from_record(const PlanRecord& r);
};

}  // namespace dnnx::cuda
