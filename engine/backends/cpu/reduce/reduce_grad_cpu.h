// The gradient of a reduction on the CPU (reduce_cpu.cc's rules), for ops that are reductions
// under another name: GlobalAveragePool is ReduceMean, GlobalMaxPool ReduceMax, over the
// spatial dims (pool/global_pool_cpu.cc).
#pragma once
#include <vector>

#include "ir/tensor.h"
#include "ops/reduce/reduce.h"
#include "runtime/training.h"

namespace dnnx {

// X [shape] reduced over the dims flagged in `reduced` (one flag per dim of X).
GradChoice plan_reduction_grad(ReduceKind kind, const Shape& x, const std::vector<bool>& reduced);

}  // namespace dnnx
