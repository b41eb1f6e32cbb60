// The strided gather's dims (glue_kernels.h: BroadcastDims, size and stride_a) for the ops that
// are one gather of X: Transpose, DepthToSpace / SpaceToDepth (a transpose of a 6-D view), Expand
// (stride 0 along the broadcast dims), Tile (each dim twice: the repeats with stride 0, then X's
// own) and Einsum's operand layouts. Simplified as the glue kernels
// expect: size-1 dims dropped and neighbours merged where stepping the outer one jumps over
// exactly the inner one, so that at most kMaxGlueDims remain (else UnsupportedModelError); one
// element is one dim of size 1.
#pragma once
#include <utility>
#include <vector>

#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "ir/graph.h"

namespace dnnx::cuda {

// dims: (size, element stride in X) of each output dim, outermost first. `what` names the
// layout in the refusal ("permutation of [2, 3, 4]").
BroadcastDims merged_gather_dims(const Node& node, const std::vector<std::pair<int64_t, int64_t>>& dims,
                                 const std::string& what);

// The output dims of the transpose of a packed X of shape `in` by `perm`.
BroadcastDims transpose_gather_dims(const Node& node, const Shape& in, const std::vector<int64_t>& perm);

// The kernel of such an op: Y's n elements of `elem` bytes gathered from X by `dims`.
inline KernelChoice gather_choice(const CudaContext& ctx, const char* algorithm, const BroadcastDims& dims,
                                  size_t elem, int64_t n) {
  const CudaContext* c = &ctx;
  return make_choice(algorithm, [=](const KernelArgs& a) {
    launch_gather(a.in<void>(0), a.out<void>(0), elem, n, dims, c->stream);
  });
}

}  // namespace dnnx::cuda
