// What Shape and ConstantOfShape produce, shared by the op file and every backend.
#pragma once
#include "ops/op.h"

namespace dnnx {

// Shape: the dims of X in [start, end) (opset 15; negative counts from the end, clamped).
Shape shape_op_dims(const Node& node, const Shape& x);

// ConstantOfShape: the one-element `value` tensor (float32 0 when absent).
ConstTensor constant_of_shape_value(const Node& node);

}  // namespace dnnx
