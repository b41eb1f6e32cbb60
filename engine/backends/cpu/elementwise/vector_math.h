// tanh and erf for the CPU kernels' inner loops (Tanh, Erf, Gelu in both forms). libm's tanhf and
// erff are scalar calls that a loop cannot vectorise (~15 ns an element here: GPT-2's two Tanh
// layers took 0.25 ms each, ViT-Tiny's twelve Erf layers 0.9 ms each); these are branch-free
// float arithmetic on fast_expf, so a DNNX_VECTOR_CLONES loop over them runs 8 lanes at a time.
// Both compute each lane's two candidate forms and select, so NaN, the infinities and -0 come
// out as libm's (NaN stays NaN, tanh(+-inf) = +-1, erf(+-inf) = +-1, the sign of 0 kept).
// Accuracy, checked against float64 in tests/test_vector_math.py over every binade: tanh within
// 4 ulp (absolute 4 ulp of 1 near 0), erf within 4 ulp (absolute 2^-24 near 0).
#pragma once
#include <cmath>

#include "backends/cpu/runtime/fast_math.h"

// DNNX_VECTOR_CLONES_AVX512: Note [avx512 clones] in runtime/fast_math.h.

namespace dnnx {

// Note [vector tanh]: |x| < 0.625: Cephes' odd minimax polynomial tanhf(x) = x + x^3 P(x^2)
// (relative error ~1 ulp; 1 - 2/(e^2x + 1) would cancel there). |x| >= 0.625: 1 - 2/(e^{2|x|} + 1),
// whose correction term is at most 0.45 of the result, so fast_expf's 2 ulp shrink there; for
// |x| past 9 it is below half an ulp of 1 and the result is exactly 1 (fast_expf saturates
// without overflow at 88.7, so the infinities give 1 too). The sign is copied back.
inline float fast_tanhf(float x) {
  const float a = std::fabs(x);
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * a + a;
  const float big = 1.0f - 2.0f / (fast_expf(2.0f * a) + 1.0f);
  return std::copysign(a < 0.625f ? small : big, x);  // NaN: a < 0.625 is false, big is NaN
}

// Note [vector erf]: the faithfully rounded erff of N. Juffa (the coefficients published at
// stackoverflow.com/questions/35148198, the ones onnxruntime's MLAS uses too):
//   |x| <= 0.921875: erf(x) = x + x Q(x^2)                      (max error ~1 ulp)
//   |x| >  0.921875: erf(x) = 1 - e^{-(t + t R(t))}, t = min(|x|, 3.925), sign copied back
// (past 3.925 erf rounds to 1 in float). fast_expf in place of expf adds its 2 ulp to the
// small term e^{..} <= 0.19, i.e. well under an ulp of the result.
inline float fast_erff(float x) {
  const float a = std::fabs(x);
  const float s = a * a;
  float q = -5.99104969e-4f;
  q = q * s + 4.99339588e-3f;
  q = q * s - 2.67667342e-2f;
  q = q * s + 1.12818025e-1f;
  q = q * s - 3.76124859e-1f;
  q = q * s + 1.28379151e-1f;
  const float small = q * x + x;
  const float t = std::min(a, 3.925f);
  float r = 1.72948930e-5f;
  r = r * t - 3.83208680e-4f;
  r = r * t + 3.88393435e-3f;
  r = r * t - 2.42545605e-2f;
  r = r * t + 1.06777847e-1f;
  r = r * t + 6.34846687e-1f;
  r = r * t + 1.28717512e-1f;
  r = r * t + t;
  const float big = 1.0f - fast_expf(-r);
  // NaN: a <= 0.921875 is false, and std::min(NaN, 3.925f) is NaN (b < a ? b : a), so big is NaN.
  return a <= 0.921875f ? small : std::copysign(big, x);
}

}  // namespace dnnx
