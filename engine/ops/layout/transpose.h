// The ONNX meaning of Transpose, written once for the op registry and every backend.
#pragma once
#include "ops/op.h"

namespace dnnx {

// The permutation for an input of `rank` dims: `perm`, or reversed dims when it is absent.
// out.shape[i] = in.shape[perm[i]]. Throws InvalidModelError naming the node unless `perm` is
// a permutation of 0..rank-1.
std::vector<int64_t> transpose_perm(const Node& node, size_t rank);

}  // namespace dnnx
