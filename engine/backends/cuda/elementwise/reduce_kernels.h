// The launchers of the Reduce* kernels beyond ReduceMean's (layout/glue_kernels.h has that one),
// for elementwise/reduce_cuda.cc: one thread per output cell (a block for a cell of many
// elements), which walks its reduced elements
// (BroadcastDims `out` locates the cell in X, `red` its elements), float32 only.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/layout/glue_kernels.h"
#include "ops/reduce/reduce.h"

namespace dnnx::cuda {

// Note [reduce by block] (reduce_kernels.cu): a cell of at least kBlockReduceMin elements is
// reduced by a block of kReduceThreads, a smaller one by a thread.
constexpr int kReduceThreads = 128;
constexpr int64_t kBlockReduceMin = 128;
inline bool reduce_by_block(int64_t count) { return count >= kBlockReduceMin; }

// y [n] = the reduction (ops/reduce/reduce.h's ReduceKind) of each cell's `count` elements of x.
void launch_reduce(ReduceKind kind, const float* x, float* y, int64_t n, const BroadcastDims& out,
                   const BroadcastDims& red, int64_t count, cudaStream_t stream);

// dx (x's shape) from x, y [n] and dy [n], each cell writing its own elements (no atomics): the
// CPU's rules (backends/cpu/reduce/reduce_cpu.cc).
void launch_reduce_grad(ReduceKind kind, const float* x, const float* y, const float* dy, float* dx, int64_t n,
                        const BroadcastDims& out, const BroadcastDims& red, int64_t count, cudaStream_t stream);

}  // namespace dnnx::cuda
