// plan_reduction (side_reduction.h): the dims a broadcast side's gradient sums over.
#include "backends/cuda/elementwise/side_reduction.h"

#include <string>
#include <vector>

namespace dnnx::cuda {

SideReduction plan_reduction(const Node& node, const Shape& side, const Shape& out) {
  struct Dim {
    int64_t size, stride;
    bool kept;
  };
  std::vector<Dim> dims;
  const size_t rank = out.size();
  int64_t stride = 1;
  std::vector<Dim> reversed;
  for (size_t k = rank; k-- > 0;) {
    const int64_t s = k < rank - side.size() ? 1 : side[k - (rank - side.size())];
    if (out[k] != 1) reversed.push_back({out[k], stride, s == out[k]});
    stride *= out[k];
  }
  for (auto it = reversed.rbegin(); it != reversed.rend(); ++it) {
    if (!dims.empty() && dims.back().kept == it->kept && dims.back().stride == it->stride * it->size) {
      dims.back().size *= it->size;
      dims.back().stride = it->stride;
    } else {
      dims.push_back(*it);
    }
  }
  SideReduction r;
  r.size = numel(side);
  for (const Dim& d : dims) {
    BroadcastDims& into = d.kept ? r.kept : r.reduced;
    if (into.rank == kMaxGlueDims) {
      node_fail<UnsupportedModelError>(node, "the gradient of the broadcast of " + shape_str(side) + " to " +
                                                 shape_str(out) + " needs more than " + std::to_string(kMaxGlueDims) +
                                                 " dims");
    }
    into.size[into.rank] = d.size;
    into.stride_a[into.rank] = d.stride;
    ++into.rank;
  }
  return r;
}

}  // namespace dnnx::cuda
