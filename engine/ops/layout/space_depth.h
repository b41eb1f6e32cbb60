// DepthToSpace and SpaceToDepth as what they are, a reshape to 6-D, a transpose and a reshape
// back: written once for the op registry and every backend.
#pragma once
#include "ops/op.h"

namespace dnnx {

// x [N, C, H, W] seen as `view` (6-D, x's bytes unchanged), permuted by `perm` into y's order.
struct BlockPermute {
  Shape view;
  std::vector<int64_t> perm;
};

// With b = blocksize:
//   DepthToSpace DCR: [N, b, b, C/b², H, W] -> perm [0, 3, 4, 1, 5, 2] -> [N, C/b², H*b, W*b]
//   DepthToSpace CRD: [N, C/b², b, b, H, W] -> perm [0, 1, 4, 2, 5, 3]
//   SpaceToDepth DCR: [N, C, H/b, b, W/b, b] -> perm [0, 3, 5, 1, 2, 4] -> [N, C*b², H/b, W/b]
//   SpaceToDepth CRD: [N, C, H/b, b, W/b, b] -> perm [0, 1, 3, 5, 2, 4]
BlockPermute block_permute(const Node& node, const Shape& x);

}  // namespace dnnx
