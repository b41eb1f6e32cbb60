// How an output-shaped gradient sums down to one broadcast side on CUDA, planned once: the
// kept and reduced dims that launch_reduce_sum (train/grad_kernels.h) walks. Shared by the
// gradients of the broadcasting ops (binary_grad_cuda.cc, pow_prelu_cuda.cc).
#pragma once
#include "backends/cuda/layout/glue_kernels.h"
#include "ir/graph.h"

namespace dnnx::cuda {

// How dY-shaped [out] values sum down to one side of shape `side`.
struct SideReduction {
  BroadcastDims kept;     // the side's own dims (strides in the output)
  BroadcastDims reduced;  // the dims it was broadcast along (strides in the output); rank 0: none
  int64_t size = 0;       // the side's elements
};

// The plan for `side` broadcast to `out`: size-1 output dims dropped, neighbours of one kind
// merged; more than kMaxGlueDims dims of a kind: UnsupportedModelError naming `node`.
SideReduction plan_reduction(const Node& node, const Shape& side, const Shape& out);

}  // namespace dnnx::cuda
