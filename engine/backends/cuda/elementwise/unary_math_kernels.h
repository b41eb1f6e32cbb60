// Launchers of the unary float ops' kernels (unary_math_kernels.cu; the formulas are
// ops/elementwise/unary_math.h's, shared with the CPU). Each queues on `stream` and checks the launch.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

#include "ir/tensor.h"
#include "ops/elementwise/unary_math.h"

namespace dnnx::cuda {

// y[i] = f(x[i]) for i < n; elements of `dtype`: float32, float16 or bfloat16 (float arithmetic,
// one rounding).
void launch_unary_math(UnaryMath kind, const UnaryParams& params, const void* x, void* y, int64_t n, DType dtype,
                       cudaStream_t stream);

// dx[i] = dy[i] * f'(x[i]) (from x and the kept y), float32.
void launch_unary_math_grad(UnaryMath kind, const UnaryParams& params, const float* x, const float* y,
                            const float* dy, float* dx, int64_t n, cudaStream_t stream);

}  // namespace dnnx::cuda
