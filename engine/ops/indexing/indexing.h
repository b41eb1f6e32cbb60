// The indexing ops' shared meaning (ops/indexing/indexing.cc, every backend): GatherElements, ScatterND,
// Tile, TopK, ArgMax / ArgMin.
#pragma once
#include "ops/op.h"

namespace dnnx {

enum class ScatterReduction { None, Add, Mul, Max, Min };
ScatterReduction scatter_reduction(const Node& node);

// Tile's repeats (a value input), one per dim of the input.
std::vector<int64_t> tile_repeats(const Node& node, const std::vector<ValueInfo>& inputs);

// TopK's k (a value input: opset 10+; the attribute before).
int64_t topk_k(const Node& node, const std::vector<ValueInfo>& inputs);

// X viewed as [outer, size, inner] around `axis` (TopK, ArgMax / ArgMin).
struct AxisView {
  int64_t outer = 1, size = 1, inner = 1;
};
AxisView axis_view(const Shape& x, int64_t axis);

}  // namespace dnnx
