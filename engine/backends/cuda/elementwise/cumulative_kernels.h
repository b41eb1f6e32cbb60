// Launcher of CumSum's and CumProd's kernels (cumulative_kernels.cu; host code: cumsum_cuda.cc).
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

#include "ir/tensor.h"
#include "ops/reduce/cumulative.h"

namespace dnnx::cuda {

// y = the running sum (or, product, the running product) of x [outer, n, inner] along n
// (ops/reduce/cumulative.h: exclusive, reverse); elements of `dtype`: float32, float16, bfloat16
// (folded in float, each output rounded once), int32 or int64 (exact, wrapping as the CPU's).
void launch_cumulative(const void* x, void* y, const CumulativeGeometry& g, DType dtype, bool product,
                       cudaStream_t stream);

}  // namespace dnnx::cuda
