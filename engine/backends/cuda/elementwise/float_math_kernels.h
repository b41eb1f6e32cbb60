// Launchers of the float classification and trigonometric kernels (float_math_kernels.cu):
// IsNaN / IsInf (float_class_cuda.cc) and the trigonometric and hyperbolic functions
// (float_math_cuda.cc), whose CPU forms are backends/cpu/elementwise/float_class_cpu.cc and
// float_math_cpu.cc. Each queues on `stream` and checks the launch.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

#include "ir/tensor.h"
#include "ops/elementwise/float_math.h"

namespace dnnx::cuda {

// y[i] = f(x[i]) for i < n, f one of Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh,
// Acosh, Atanh (float_math_cuda_kind says which FloatMath kinds these are); elements of `dtype`
// (float32, float16 or bfloat16; float arithmetic, one rounding to the stored type).
void launch_trig(FloatMath kind, const void* x, void* y, int64_t n, DType dtype, cudaStream_t stream);

// dx[i] = dy[i] * f'(x[i]) for the same f, float32 (the CPU's slopes: ops/elementwise/float_math.h).
void launch_trig_grad(FloatMath kind, const float* x, const float* dy, float* dx, int64_t n, cudaStream_t stream);

// Whether launch_trig computes `kind`.
bool is_trig(FloatMath kind);

// IsNaN (nan = true) or IsInf (nan = false; an infinity counts when its sign is detected):
// y[i] (bool) for x[i] of `dtype` (float32, float16 or bfloat16), i < n.
void launch_float_class(const void* x, bool* y, int64_t n, DType dtype, bool nan, bool positive, bool negative,
                        cudaStream_t stream);

}  // namespace dnnx::cuda
