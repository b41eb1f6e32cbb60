// Sigmoid and SiLU (x * sigmoid(x)) over runs of floats: the Sigmoid kernel's pass and the
// Conv+Swish epilogue's (conv/conv_activation_cpu.cc) share these two functions, so a fused
// Conv+Swish gives the unfused Conv, Sigmoid and Mul's bits (Note [sigmoid rows]).
#pragma once
#include <cstdint>

namespace dnnx {

// y[i] = sigmoidf(x[i]) (activation_cpu.h); x and y may be the same array.
void sigmoid_rows(const float* x, float* y, int64_t n);
// y[i] = y[i] * sigmoidf(y[i]): the sigmoid rounded to float, then the product.
void swish_rows(float* y, int64_t n);

}  // namespace dnnx
