// The broadcast of a binary op's operands, analysed once at plan time (binary_cuda.cc), shared
// with the binary gradients (binary_grad_cuda.cc).
#pragma once
#include "backends/cuda/layout/glue_kernels.h"
#include "ir/graph.h"

namespace dnnx::cuda {

// The broadcast of A and B to `out`, merged (size-1 output dims dropped, neighbouring dims that
// broadcast the same way joined); rank 0 when neither side broadcasts. Too many dims after
// merging: UnsupportedModelError naming `node`.
BroadcastDims plan_broadcast(const Node& node, const Shape& a, const Shape& b, const Shape& out);

}  // namespace dnnx::cuda
