// The ONNX meaning of Concat, written once for the op registry and every backend.
#pragma once
#include <vector>

#include "ops/op.h"

namespace dnnx {

// The concatenation axis in [0, rank): `axis` (required from opset 4; opset 1-3 default to 1),
// negative counting from the back. Throws InvalidModelError naming the node.
int64_t concat_axis(const Node& node, int64_t rank);

// Concat as byte copies: the output is `outer` rows, each input i's row of chunk_bytes[i] bytes
// after the previous inputs' (rows before `axis` are outer, the rest of each input is its chunk).
struct ConcatLayout {
  int64_t outer = 1;
  std::vector<size_t> chunk_bytes;
};
ConcatLayout concat_layout(const Node& node, const std::vector<ValueInfo>& inputs);

}  // namespace dnnx
