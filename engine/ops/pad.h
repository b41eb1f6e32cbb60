// Pad's amounts, read once for the op file and every backend.
#pragma once
#include "ops/op.h"

namespace dnnx {

// Per dim of X: elements added before and after (negative: removed).
struct PadAmounts {
  Shape begin;
  Shape end;
};

// From the `pads` attribute (opset < 11) or the constant `pads` input with optional `axes`
// (opset 11+, axes from 18); InvalidModelError naming the node for a wrong length or an axis
// out of range.
PadAmounts pad_amounts(const Node& node, const std::vector<ValueInfo>& inputs, size_t rank);

}  // namespace dnnx
