// Where the convolution planner's candidates come from (conv_algo.h chooses among them), in any
// direction (conv_direction.h):
//   ranked  cuDNN's heuristic list (heuristic_candidates, conv_direction.h), instant
//   timed   every candidate run by cudnnFind*AlgorithmEx on scratch buffers, then re-timed warm
//           (Note [warm conv timing] in conv_candidates.cc), fastest first, near-ties in the
//           heuristic's order (the rules of Note [the pick], pick.h; one "timing run" in the
//           planner's stats)
// and the plan-time allocations both need, which may fail for want of memory.
#pragma once
#include <string>
#include <vector>

#include "backends/cuda/search/conv_algo.h"
#include "backends/cuda/search/reasons.h"
#include "backends/cuda/search/search.h"

namespace dnnx::cuda {

struct TimedCandidates {
  std::vector<ConvCandidate> perfs;
  // The workspace the search ran with: the limit, else the largest need within it, or less where
  // that could not be allocated (then a candidate needing more was not timed).
  size_t search_workspace = 0;
  std::vector<Rejected> notes;  // each smaller retry of the search workspace, with the reason
};

// An out-of-memory search workspace retries with the next smaller need (down to none) before
// the search gives up; scratch X, W and Y that cannot be allocated are a DeviceError.
TimedCandidates timed_candidates(const Search& search, ConvDirection dir, const ConvDescriptors& d,
                                 size_t workspace_limit);

// Device memory for planning: false (and `out` empty) when it cannot be had for want of memory,
// for real or by DNNX_TEST_OOM_ABOVE, even after idle search scratch was let go (Note [search
// scratch]); any other failure is a DeviceError.
bool try_plan_alloc(const CudaContext& ctx, size_t bytes, DeviceMemory& out);

}  // namespace dnnx::cuda
