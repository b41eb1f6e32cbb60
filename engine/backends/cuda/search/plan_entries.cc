#include "backends/cuda/search/plan_entries.h"

#include "backends/cuda/search/reasons.h"

namespace dnnx::cuda {

PlanRecord ConvAlgoEntry::record() const {
  PlanRecord r;
  r.algo = algo;
  r.math_type = math_type;
  r.workspace_bytes = workspace_bytes;
  r.time_ms = time_ms;
  r.algorithm = algorithm;
  r.math = math;
  r.rejected = rejected;
  return r;
}

std::optional<ConvAlgoEntry> ConvAlgoEntry::from_record(const PlanRecord& r) {
  ConvAlgoEntry e;
  e.algo = r.algo;
  e.math_type = r.math_type;
  e.workspace_bytes = r.workspace_bytes;
  e.time_ms = r.time_ms;
  e.algorithm = r.algorithm;
  e.math = r.math;
  e.rejected = r.rejected;
  return e;
}

PlanRecord ConvPoolEntry::record() const {
  PlanRecord r;
  r.algo = direct ? 1 : 0;
  r.time_ms = direct ? direct_ms : pair_ms;
  r.algorithm = direct ? direct_name : pair_name;
  const double loser_ms = direct ? pair_ms : direct_ms;
  r.rejected = {{direct ? pair_name : direct_name, format_ms(loser_ms), loser_ms}};
  return r;
}

std::optional<ConvPoolEntry> ConvPoolEntry::from_record(const PlanRecord& r) {
  if (r.rejected.size() != 1) return std::nullopt;
  ConvPoolEntry e;
  e.direct = r.algo == 1;
  const double other = r.rejected[0].time_ms;
  e.direct_ms = e.direct ? r.time_ms : other;
  e.pair_ms = e.direct ? other : r.time_ms;
  (e.direct ? e.direct_name : e.pair_name) = r.algorithm;
  (e.direct ? e.pair_name : e.direct_name) = r.rejected[0].algorithm;
  if (e.direct_ms < 0 || e.pair_ms < 0) return std::nullopt;
  return e;
}

PlanRecord GemmEntry::record() const {
  PlanRecord r;
  r.algo = rank;
  r.workspace_bytes = workspace_bytes;
  r.time_ms = time_ms;
  r.algorithm = algorithm;
  r.rejected = rejected;
  return r;
}

std::optional<GemmEntry> GemmEntry::from_record(const PlanRecord& r) {
  GemmEntry e;
  e.rank = r.algo;
  e.workspace_bytes = r.workspace_bytes;
  e.time_ms = r.time_ms;
  e.algorithm = r.algorithm;
  e.rejected = r.rejected;
  return e;
}

}  // namespace dnnx::cuda
