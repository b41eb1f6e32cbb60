// HardSwish on the CPU, shared by the HardSwish kernel (unary_math_cpu.cc) and the conv's fused
// activation (conv/conv_activation_cpu.cc), so the fused layer gives the unfused op's bits.
#pragma once
#include <cstdint>

namespace dnnx {

// y[i] = x[i] * max(0, min(1, x[i] / 6 + 0.5)) with std::min and std::max's NaN rule (a NaN
// x gives NaN), the division rounded as IEEE's (Note [hard swish without a division]); y may be x.
void hard_swish_rows(const float* x, float* y, int64_t n);

}  // namespace dnnx
