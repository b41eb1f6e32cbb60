// The gradient of a reduction on CUDA (reduce_cuda.cc: one launch, each cell writing its own
// elements of dX), for ops that are reductions under another name: GlobalAveragePool is
// ReduceMean, GlobalMaxPool ReduceMax, over the spatial dims (pool/global_pool_cuda.cc).
#pragma once
#include <vector>

#include "ops/reduce/reduce.h"
#include "runtime/training.h"

namespace dnnx::cuda {

// The request's X (inputs[0]) reduced over the dims flagged in `reduced` (one flag per dim).
GradChoice plan_reduction_grad(const GradRequest& r, ReduceKind kind, const std::vector<bool>& reduced);

}  // namespace dnnx::cuda
