// The ONNX meaning of MatMul, written once for the op registry and every backend.
#pragma once
#include <utility>
#include <vector>

#include "ops/op.h"

namespace dnnx {

// numpy.matmul: A [..., M, K] x B [..., K, N] -> out [batch..., M, N]. A 1-D A [K] is read as
// [1, K] and a 1-D B [K] as [K, 1]; the added dim is dropped from `out` again.
struct MatMulGeometry {
  int64_t m = 0, k = 0, n = 0;
  Shape batch;    // the broadcast batch dims of the output
  Shape batch_a;  // A's batch dims, left-padded with 1s to batch.size()
  Shape batch_b;  // B's batch dims, left-padded with 1s to batch.size()
  Shape out;
};

// Throws InvalidModelError naming the node when K differs or the batch dims cannot broadcast.
MatMulGeometry matmul_geometry(const Node& node, const Shape& a, const Shape& b);

// Element offsets of A's and B's matrices for every output batch, in output order (a batch dim
// of size 1 on one side repeats that side's matrix): shared by the forward and the gradient.
std::vector<std::pair<int64_t, int64_t>> matmul_batch_offsets(const MatMulGeometry& g);

}  // namespace dnnx
