// Note [exp rows]: Exp was libm's expf, a scalar call per element: 4.07 ms over 1.2M floats
// against onnxruntime's whole run of 0.60 (1 thread, this 2-core Zen 3 EPYC, session 16). Now
// fast_expf (runtime/fast_math.h, the Softmax's and Sigmoid's exp: within 2 ulp, subnormal results
// rounded as onnxruntime's), with +inf past ln(FLT_MAX) where fast_expf saturates, in a loop the
// compiler clones for AVX-512 and the portable path, and by hand in 8 lanes for a CPU with AVX2
// but no AVX-512, whose compiled clone keeps fast_expf's selects (Note [sigmoid rows in avx2]).
// The AVX2 loop does fast_expf's operations in its order, as written there (mul and add, no FMA);
// tests/test_vector_math.py bounds whichever path the CPU takes against float64 (2 ulp) and
// onnxruntime. Kernel time over 1.2M floats in [-10, 10]: 4.07 -> 1.00 ms (onnxruntime's whole
// run 0.72).
#include "backends/cpu/elementwise/exp_rows_cpu.h"

#include <cmath>
#include <limits>

#include "backends/cpu/runtime/avx2_lanes.h"
#include "backends/cpu/runtime/cpu_features.h"
#include "backends/cpu/runtime/fast_math.h"

namespace dnnx {

namespace {

// The largest float whose e^x is finite (e^88.7228317 = 3.40279e38; the next float, 88.7228394,
// is past ln(FLT_MAX) = 88.72283911): e^x of any x above it is +inf, as libm's expf gives.
constexpr float kLogFloatMax = 88.72283172607421875f;

DNNX_VECTOR_CLONES_AVX512 void exp_rows_clones(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = v > kLogFloatMax ? std::numeric_limits<float>::infinity() : fast_expf(v);
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
#define DNNX_EXP_AVX2 1

// fast_expf's steps on 8 lanes: the subnormal range as e^(x + 40) * e^-40, the clamp (a NaN stays:
// vmaxps and vminps return their second operand where either is NaN), the range reduction and
// polynomial, 2^(n-1) * 2; then +inf past ln(FLT_MAX).
DNNX_TARGET_AVX2 __attribute__((always_inline)) inline __m256 exp8(__m256 x) {
  const __m256 subnormal = _mm256_cmp_ps(x, _mm256_set1_ps(-86.6f), _CMP_LT_OQ);
  const __m256 overflow = _mm256_cmp_ps(x, _mm256_set1_ps(kLogFloatMax), _CMP_GT_OQ);
  __m256 v = _mm256_blendv_ps(x, _mm256_add_ps(x, _mm256_set1_ps(40.0f)), subnormal);
  v = _mm256_max_ps(_mm256_set1_ps(-86.6f), v);
  v = _mm256_min_ps(_mm256_set1_ps(88.72283f), v);
  __m256 e = exp8_in_normal_range(v);
  e = _mm256_mul_ps(e, _mm256_blendv_ps(_mm256_set1_ps(1.0f), _mm256_set1_ps(4.24835426e-18f), subnormal));
  return _mm256_blendv_ps(e, _mm256_set1_ps(std::numeric_limits<float>::infinity()), overflow);
}

DNNX_TARGET_AVX2 void exp_rows_avx2(const float* x, float* y, int64_t n) { map8<exp8>(x, y, n); }
#endif

}  // namespace

void exp_rows(const float* x, float* y, int64_t n) {
#ifdef DNNX_EXP_AVX2
  if (cpu_avx2_without_avx512()) return exp_rows_avx2(x, y, n);
#endif
  exp_rows_clones(x, y, n);
}

}  // namespace dnnx
