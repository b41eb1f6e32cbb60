// Tanh and the tanh form of Gelu over runs of floats (the Tanh kernel's pass, activation_cpu.cc, and
// Gelu's, unary_math_cpu.cc): Note [tanh rows in avx2].
#pragma once
#include <cstdint>

namespace dnnx {

// y[i] = fast_tanhf(x[i]) (vector_math.h); x and y may be the same array.
void tanh_rows(const float* x, float* y, int64_t n);
// y[i] = 0.5 x (1 + fast_tanhf(sqrt(2/pi) (x + 0.044715 x^3))), onnxruntime's tanh Gelu.
void gelu_tanh_rows(const float* x, float* y, int64_t n);

}  // namespace dnnx
