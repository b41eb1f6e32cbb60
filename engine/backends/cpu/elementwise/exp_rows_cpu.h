// Exp over runs of floats (the Exp kernel's pass, unary_math_cpu.cc): Note [exp rows].
#pragma once
#include <cstdint>

namespace dnnx {

// y[i] = e^x[i]: fast_expf (runtime/fast_math.h: 2 ulp, subnormal results as onnxruntime's), +inf
// past ln(FLT_MAX), NaN kept. x and y may be the same array.
void exp_rows(const float* x, float* y, int64_t n);

}  // namespace dnnx
