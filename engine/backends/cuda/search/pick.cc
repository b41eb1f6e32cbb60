#include "backends/cuda/search/pick.h"

#include <algorithm>
#include <numeric>

namespace dnnx::cuda {

int pick_fastest(const std::vector<double>& ms, double take_over) {
  int best = -1;
  for (size_t i = 0; i < ms.size(); ++i) {
    if (ms[i] < 0) continue;
    if (best < 0 || ms[i] < take_over * ms[static_cast<size_t>(best)]) best = static_cast<int>(i);
  }
  return best;
}

std::vector<size_t> fastest_first(const std::vector<double>& ms, const std::vector<bool>& ran) {
  std::vector<size_t> order(ms.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (ran[a] != ran[b]) return static_cast<bool>(ran[a]);
    return ran[a] && ms[a] < ms[b];
  });
  return order;
}

size_t near_tie_leader(const std::vector<double>& ms, const std::vector<bool>& ran, const std::vector<int>& heuristic_rank,
                       double near_tie) {
  if (ms.empty() || !ran[0] || ms[0] <= 0) return 0;
  const double fastest = ms[0];
  size_t leader = 0;
  int leader_rank = -1;
  for (size_t i = 0; i < ms.size(); ++i) {
    if (!ran[i] || ms[i] <= 0 || ms[i] > near_tie * fastest || heuristic_rank[i] < 0) continue;
    if (leader_rank < 0 || heuristic_rank[i] < leader_rank) {  // the first of the best rank wins
      leader = i;
      leader_rank = heuristic_rank[i];
    }
  }
  return leader;
}

}  // namespace dnnx::cuda
