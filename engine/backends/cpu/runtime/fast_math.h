// exp for the CPU kernels' inner loops. std::exp is a scalar libm call that the compiler cannot
// vectorise; this one is branch-free float arithmetic, so a loop over it compiles to SIMD code
// (SSE2 at least). Cody-Waite range reduction x = n*ln2 + r, |r| <= ln2/2, then the Cephes
// degree-6 polynomial for e^r and 2^n built in the exponent bits. Relative error <= 2 ulp over
// the normal range (subnormal results round once more) (checked against float64 in tests/test_activations.py through Sigmoid and Tanh).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>

// Compiles a hot loop twice, for AVX2+FMA (x86-64-v3) and for the baseline, and picks one at
// load time (GCC/Clang function multiversioning), so the wheel runs anywhere and uses 8-wide
// vectors where the CPU has them.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define DNNX_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define DNNX_VECTOR_CLONES
#endif

// Note [avx512 clones]: the transcendental loops (elementwise/vector_math.h's callers, Softmax's
// rows, the conv activations' Sigmoid and HardSwish) are
// compute-bound: ~40 vector ops per 8 lanes of erf. A third clone for AVX-512 (x86-64-v4: 16
// lanes, mask registers for the selects) runs them 2.2x faster than the AVX2 clone (erf 1.7
// against 3.8 cycles an element on this Xeon); the same arithmetic in every clone, so a
// machine's results are its clone's, whatever the thread count.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define DNNX_VECTOR_CLONES_AVX512 __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define DNNX_VECTOR_CLONES_AVX512
#endif

namespace dnnx {

// e^x for x already in [-86.6, 88.72283] (fast_expf's range reduction and polynomial): a
// normal float, as x / ln2 = n + r with |r| <= ln2 / 2.
inline float expf_in_normal_range(float x) {
  const float t = x * 1.44269504088896341f;               // x / ln2
  const float n = (t + 12582912.0f) - 12582912.0f;        // round to nearest (1.5 * 2^23 trick)
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;  // x - n*ln2 in two steps
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float er = p * r * r + r + 1.0f;
  // 2^n: n in [-125, 128]; 2^128 overflows the exponent, so split it as 2^(n-1) * 2.
  const int32_t bits = (static_cast<int32_t>(n) + 126) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return er * scale * 2.0f;
}

inline float fast_expf(float x) {
  // Above 88.72 e^x overflows float. Below -86.6 the result is subnormal (or 0 below -103.97):
  // computed as e^(x + 40) * e^-40, so that the polynomial stays in the normal range and the last
  // multiply rounds into the subnormals, as onnxruntime's exp does (a Softmax's tiny probabilities
  // matter: a detector's `score > 0` keeps exactly the boxes onnxruntime keeps). The clamp keeps
  // n >= -125 so that 2^(n-1) stays a normal float.
  const bool subnormal = x < -86.6f;
  x = subnormal ? x + 40.0f : x;
  x = std::min(std::max(x, -86.6f), 88.72283f);
  return expf_in_normal_range(x) * (subnormal ? 4.24835426e-18f : 1.0f);  // e^-40
}

// Note [exp without subnormals]: fast_expf with every x below -86.6 taken as -86.6 (a normal
// result, e^-86.6 ~ 2.2e-38), for the callers that add 1 to it: 1 + e^x is exactly 1 there
// either way (e^x < 2^-24), so sigmoidf's results are fast_expf's bit for bit (compared when
// written over 2^17 inputs: a ramp over [-100, 100] and random bit patterns, the infinities
// included; tests/test_activations.py bounds Sigmoid against float64 past both ends of exp).
// Without the subnormal path (a compare, a select, an add and a multiply of the ~30 vector
// ops), the conv's Swish epilogue ran 0.45 -> 0.37 ns an element (AVX-512 clone, this 2-core
// EPYC, best of 9 loaded runs): EfficientNet-B0's Swish is ~7M elements a call.
inline float fast_expf_no_subnormal(float x) {
  return expf_in_normal_range(std::min(std::max(x, -86.6f), 88.72283f));
}

}  // namespace dnnx
