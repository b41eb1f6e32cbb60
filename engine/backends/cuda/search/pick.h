// Note [the pick]: the rules by which a search takes one of its timed candidates (search.h, step
// 4), each as it was measured to be needed (a change here changes which algorithm a fresh
// exhaustive search takes; a cached choice stays what it was).
//   take-over (pick_fastest)  the candidates in rank order: the first timed one leads, and a
//       later one takes over only when its time is below `take_over` times the leader's.
//       kStrictlyFaster: the planner's own kernels against cuDNN's choice (conv_cuda.cc) and the
//       direct conv+pool kernel against the pair (conv_pool_cuda.cc): a tie stays with the one
//       ranked first. kLtTakeOver: cuBLASLt's candidates (Note [GEMM candidates], lt_search.h).
//   fastest first (fastest_first, near_tie_leader)  cuDNN's re-timed candidates sorted by time
//       (ties keep Find's order, those that failed last); then the first candidate in cuDNN's
//       heuristic order within kConvNearTie of the fastest moves to the front (Note [warm conv
//       timing], conv_candidates.cc), and the first of that order that qualifies is taken
//       (conv_algo.cc).
#pragma once
#include <cstddef>
#include <vector>

namespace dnnx::cuda {

constexpr double kStrictlyFaster = 1.0;
// A later-ranked cuBLASLt candidate wins only below 90% of the best time so far: timed alone,
// near-equal candidates swapped places between processes, and inside LeNet's replayed step the
// swap cost up to 9 us (fc2's dA: the heuristic's pick 7.4 us, the second 10.4), so near-ties go
// to the heuristic's order.
constexpr double kLtTakeOver = 0.90;
// Timed alone, LeNet's conv2 (batch 256) IMPLICIT_GEMM and IMPLICIT_PRECOMP_GEMM swapped places
// between processes on an H200, while inside the replayed fine-tuning step they took 67 and 46 us
// (the heuristic's pick the faster).
constexpr double kConvNearTie = 1.10;

// The take-over rule over `ms` (rank order, -1: not timed): the index taken, -1 when none was timed.
int pick_fastest(const std::vector<double>& ms, double take_over);

// The candidates' order, fastest first: those that ran (ran[i]) by ms, stably, then the others
// in their order.
std::vector<size_t> fastest_first(const std::vector<double>& ms, const std::vector<bool>& ran);

// For candidates in that order: the index of the one to move to the front, the first by
// heuristic_rank (its place in cuDNN's heuristic list, -1: not listed) that ran with a time above
// 0 and at most `near_tie` times the fastest's; 0 when none (or the fastest has no time).
size_t near_tie_leader(const std::vector<double>& ms, const std::vector<bool>& ran, const std::vector<int>& heuristic_rank,
                       double near_tie);

}  // namespace dnnx::cuda
