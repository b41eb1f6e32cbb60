// Note [hard swish without a division]: HardSwish's x / 6 was a vdivps per 16 elements, the
// slowest part of a cheap activation (hard_swish_rows: 5.8% of MobileNetV3-Small's CPU samples at
// 1 thread, this 2-core EPYC). With FMA the quotient is exact without dividing: q = x * (1/6),
// r = fma(-q, 6, x) (the remainder, exact), q' = fma(r, 1/6, q) is x / 6 rounded as IEEE's for
// every float with |x| >= 1e-30 but the infinities (compared over all 2^32 bit patterns when this
// was written), and where |x| < 1e-30 the two quotients differ only below half an ulp of 0.5, so
// q' + 0.5 is x / 6 + 0.5. x is first clamped below at -3.5: the factor is 0 there either way,
// and -inf (whose q' is NaN) takes it too; +inf's NaN factor becomes 1 in min(., 1), as inf / 6's
// does. So the AVX-512 path gives the division's bits for every input (compared over all 2^32
// patterns through hard_swish_rows; tests/test_activations.py samples them); other CPUs divide.
// The HardSwish op over [1, 96, 56, 56] 39 -> 30-34 us; MobileNetV3-Small, whose convs fuse it,
// 1.06, 0.99, 1.06 -> 0.98, 1.03, 0.97 of onnxruntime's time at 1 thread (3 pairs of sweeps).
#include "backends/cpu/elementwise/hard_swish_cpu.h"

#include <algorithm>

#include "backends/cpu/runtime/fast_math.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DNNX_HARD_SWISH_AVX512 1
#endif

namespace dnnx {

namespace {

DNNX_VECTOR_CLONES void hard_swish_divide(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * std::max(0.0f, std::min(1.0f, x[i] / 6.0f + 0.5f));
}

#ifdef DNNX_HARD_SWISH_AVX512
__attribute__((target("avx512f"))) inline __m512 hard_swish16(__m512 x) {
  const __m512 six = _mm512_set1_ps(6.0f), sixth = _mm512_set1_ps(1.0f / 6.0f);
  const __m512 xc = _mm512_max_ps(x, _mm512_set1_ps(-3.5f));  // NaN -> -3.5: NaN * 0 below
  const __m512 q = _mm512_mul_ps(xc, sixth);
  const __m512 exact = _mm512_fmadd_ps(_mm512_fnmadd_ps(q, six, xc), sixth, q);  // xc / 6
  // std::min(1, v): 1 where v is NaN (min_ps returns its second operand); std::max(0, m): +0 for -0
  const __m512 m = _mm512_min_ps(_mm512_add_ps(exact, _mm512_set1_ps(0.5f)), _mm512_set1_ps(1.0f));
  return _mm512_mul_ps(x, _mm512_max_ps(m, _mm512_setzero_ps()));
}

__attribute__((target("avx512f"))) void hard_swish_avx512(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, hard_swish16(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 tail = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(y + i, tail, hard_swish16(_mm512_maskz_loadu_ps(tail, x + i)));
  }
}
#endif

}  // namespace

void hard_swish_rows(const float* x, float* y, int64_t n) {
#ifdef DNNX_HARD_SWISH_AVX512
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (avx512) return hard_swish_avx512(x, y, n);
#endif
  hard_swish_divide(x, y, n);
}

}  // namespace dnnx
