// gather_dims.h: the dims of the ops that are one strided gather of X.
#include "backends/cuda/layout/gather_dims.h"

namespace dnnx::cuda {

BroadcastDims merged_gather_dims(const Node& node, const std::vector<std::pair<int64_t, int64_t>>& dims,
                                 const std::string& what) {
  std::vector<std::pair<int64_t, int64_t>> merged;  // (size, stride)
  for (const auto& [size, stride] : dims) {
    if (size == 1) continue;
    if (!merged.empty() && merged.back().second == size * stride) {
      merged.back().first *= size;
      merged.back().second = stride;
    } else {
      merged.emplace_back(size, stride);
    }
  }
  if (merged.size() > static_cast<size_t>(kMaxGlueDims)) {
    node_fail<UnsupportedModelError>(node, what + " needs more than " + std::to_string(kMaxGlueDims) +
                                               " dims after merging");
  }
  if (merged.empty()) merged.emplace_back(1, 1);  // one element
  BroadcastDims out;
  out.rank = static_cast<int>(merged.size());
  for (size_t d = 0; d < merged.size(); ++d) {
    out.size[d] = merged[d].first;
    out.stride_a[d] = merged[d].second;
  }
  return out;
}

BroadcastDims transpose_gather_dims(const Node& node, const Shape& in, const std::vector<int64_t>& perm) {
  std::vector<int64_t> in_strides(in.size(), 1);
  for (size_t d = in.size(); d-- > 1;) in_strides[d - 1] = in_strides[d] * in[d];
  std::vector<std::pair<int64_t, int64_t>> dims;
  for (int64_t axis : perm) dims.emplace_back(in[axis], in_strides[axis]);
  return merged_gather_dims(node, dims, "permutation of " + shape_str(in));
}

}  // namespace dnnx::cuda
