// The ONNX meaning of Concat, written once for the op registry and every backend.
#pragma once
#include "ops/op.h"

namespace dnnx {

// The concatenation axis in [0, rank): `axis` (required from opset 4; opset 1-3 default to 1),
// negative counting from the back. Throws InvalidModelError naming the node.
int64_t concat_axis(const Node& node, int64_t rank);

}  // namespace dnnx
