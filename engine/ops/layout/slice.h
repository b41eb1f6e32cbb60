// Slice's per-dim ranges, computed once for the op file and every backend.
#pragma once
#include "ops/op.h"

namespace dnnx {

// For every dim of X: output index o reads X index start[d] + o * step[d]; out[d] is the
// output's size (dims the node does not slice keep start 0, step 1).
struct SliceRanges {
  Shape start;
  Shape step;
  Shape out;
};

// starts/ends/axes from attributes (opset < 10) or constant inputs (10+, with steps);
// negative values count from the end and are clamped as ONNX specifies.
SliceRanges slice_ranges(const Node& node, const std::vector<ValueInfo>& inputs, const Shape& x);

}  // namespace dnnx
