// Launchers of the float classification and float math kernels (float_math_kernels.cu): IsNaN /
// IsInf (float_class_cuda.cc) and ops/elementwise/float_math.h's ops (float_math_cuda.cc), whose
// CPU forms are backends/cpu/elementwise/float_class_cpu.cc and float_math_cpu.cc. Each queues on
// `stream` and checks the launch.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

#include "ir/tensor.h"
#include "ops/elementwise/float_math.h"

namespace dnnx::cuda {

// y[i] = f(x[i]) for i < n, f any of ops/elementwise/float_math.h's kinds (the trigonometric and
// hyperbolic functions, Ceil, Floor, Round, Softsign, Celu, ThresholdedRelu, Swish, Sign, Shrink)
// with `params` its attributes; elements of `dtype` (float32, float16 or bfloat16; float
// arithmetic, one rounding to the stored type).
void launch_float_math(FloatMath kind, const FloatMathParams& params, const void* x, void* y, int64_t n, DType dtype,
                       cudaStream_t stream);

// dx[i] = dy[i] * f'(x[i]) for the same f where float_math_differentiable(kind), float32 (the
// CPU's slopes: ops/elementwise/float_math.h).
void launch_float_math_grad(FloatMath kind, const FloatMathParams& params, const float* x, const float* dy, float* dx,
                            int64_t n, cudaStream_t stream);

// IsNaN (nan = true) or IsInf (nan = false; an infinity counts when its sign is detected):
// y[i] (bool) for x[i] of `dtype` (float32, float16 or bfloat16), i < n.
void launch_float_class(const void* x, bool* y, int64_t n, DType dtype, bool nan, bool positive, bool negative,
                        cudaStream_t stream);

}  // namespace dnnx::cuda
