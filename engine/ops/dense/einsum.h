// Einsum's equation, parsed once for the op registry and every backend.
#pragma once
#include <map>

#include "ops/op.h"

namespace dnnx {

// A label is a letter's character code, or kEllipsisLabel + j for the j-th dim of the
// ellipsis block (j counted from the block's left, the block as wide as the widest operand's;
// narrower operands' ellipsis dims are right-aligned in it, as numpy broadcasts).
constexpr int kEllipsisLabel = 256;

struct EinsumEquation {
  std::vector<std::vector<int>> inputs;  // per operand, one label per dim (a repeat: a diagonal)
  std::vector<int> output;               // distinct labels
  std::map<int, int64_t> sizes;          // per label; an ellipsis dim broadcasts from size 1
};

// "ij,jk->ik" with operand shapes -> the labels. Implicit form (no "->"): the ellipsis dims,
// then the letters used once, in ASCII order (numpy's). Spaces are ignored. InvalidModelError
// naming the node for a malformed equation or sizes that disagree.
EinsumEquation parse_einsum(const Node& node, const std::vector<Shape>& shapes);

}  // namespace dnnx
