// Which axes a Reduce* op reduces, shared by the op file and every backend.
#pragma once
#include "ops/op.h"

namespace dnnx {

struct ReduceAxes {
  std::vector<bool> reduced;  // one flag per input dim
  bool keepdims = true;
  Shape out;                  // the output shape (reduced dims 1, or dropped without keepdims)
};

// Axes from the attribute (opset < 18) or the constant optional input (18+); no axes means
// every axis, or none with noop_with_empty_axes (18+).
ReduceAxes reduce_axes(const Node& node, const std::vector<ValueInfo>& inputs, const Shape& x);

}  // namespace dnnx
