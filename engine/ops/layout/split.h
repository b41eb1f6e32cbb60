// Split's axis and part sizes, shared by the op file and every backend.
#pragma once
#include "ops/op.h"

namespace dnnx {

struct SplitParts {
  int64_t axis = 0;
  std::vector<int64_t> sizes;  // one per node output, summing to X's dim `axis`
};

// Sizes from the `split` attribute (opset < 13) or constant input (13+); otherwise equal parts,
// one per output (from opset 18 `num_outputs` parts, the last one smaller when uneven).
SplitParts split_parts(const Node& node, const std::vector<ValueInfo>& inputs, const Shape& x);

}  // namespace dnnx
