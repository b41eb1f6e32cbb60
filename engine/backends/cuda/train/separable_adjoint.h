// The gradient of a separable gather, as a gather (Note [separable adjoint] in
// separable_adjoint.cu): Resize (y[o] = sum over tap combinations of prod_d w_d * x[i]) and Pad
// (each output reads one x element, or the constant) on CUDA. Per dim, for each index of X, the
// outputs along that dim that read it and their weights; dX's element i is the sum over the
// product of its dims' lists of prod_d w_d * dY, one thread's sum in a fixed order: no atomics,
// the same bits on every run.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "backends/cuda/backend/cuda_context.h"
#include "ir/tensor.h"

namespace dnnx::cuda {

constexpr int kMaxAdjointDims = 8;

// The kernel's view of the lists: dim d's in[d] + 1 list starts begin at starts[first[d]], each
// an index into outs (an output index along the dim) and weights. Passed by value.
struct SeparableAdjoint {
  int rank = 0;
  int64_t in[kMaxAdjointDims] = {};          // X's dims
  int64_t out_stride[kMaxAdjointDims] = {};  // Y's packed strides
  int64_t first[kMaxAdjointDims] = {};
  const int64_t* starts = nullptr;
  const int64_t* outs = nullptr;
  const float* weights = nullptr;
};

// readers[d][i]: the (output index along d, weight) pairs that read X's index i along d, in
// output order; zero weights and positions that take no X element are left out by the caller.
using AdjointReaders = std::vector<std::vector<std::vector<std::pair<int64_t, float>>>>;

// The lists in device memory, copied once (at plan time) and kept by the gradient kernel.
class SeparableAdjointLists {
 public:
  // x: X's shape, out: Y's; at most kMaxAdjointDims dims (the callers' own limits are lower).
  SeparableAdjointLists(const CudaContext& ctx, const Shape& x, const Shape& out, const AdjointReaders& readers);
  const SeparableAdjoint& view() const { return view_; }

 private:
  DeviceMemory memory_;
  SeparableAdjoint view_;
};

// dx [x_size] = the adjoint over dy (every element written; none of dY's reads past Y).
void launch_separable_adjoint(const SeparableAdjoint& a, const float* dy, float* dx, int64_t x_size,
                              cudaStream_t stream);

}  // namespace dnnx::cuda
