// The ONNX meaning of Softmax and LogSoftmax, written once for the op registry and every backend.
#pragma once
#include "ops/op.h"

namespace dnnx {

// The input viewed as [outer, n, inner], normalised over n.
//   opset < 13: the input is coerced to 2-D at `axis` (default 1): outer = prod(dims[:axis]),
//               n = prod(dims[axis:]), inner = 1 — one softmax over the whole flattened tail.
//   opset >= 13: along the single `axis` (default -1): n = dims[axis], inner = prod(dims[axis+1:]).
struct SoftmaxGeometry {
  int64_t outer = 1;
  int64_t n = 1;
  int64_t inner = 1;
};

// Throws InvalidModelError naming the node when `axis` is out of range for the input's rank.
SoftmaxGeometry softmax_geometry(const Node& node, const Shape& x);

}  // namespace dnnx
