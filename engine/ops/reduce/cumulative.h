// CumSum and CumProd: the running sum / product of X along one axis, X viewed as
// [outer, n, inner] around it. exclusive: element k holds the fold of the elements before k
// (the first is the identity, 0 or 1); reverse: the fold runs from the end of the axis.
#pragma once
#include "ops/op.h"

namespace dnnx {

struct CumulativeGeometry {
  int64_t outer = 1, n = 1, inner = 1;
  bool exclusive = false;
  bool reverse = false;
};

// From X's shape, the constant axis input (input 1) and the attributes; the OpDef has checked them.
CumulativeGeometry cumulative_geometry(const Node& node, const std::vector<ValueInfo>& inputs);

}  // namespace dnnx
