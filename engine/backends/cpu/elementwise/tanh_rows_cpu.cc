// Note [tanh rows in avx2]: on a CPU with AVX2 but no AVX-512 the compiler's clone of the
// fast_tanhf loop kept its selects and copysign as scalar-shaped code: Tanh over 1.2M floats in
// [-4, 4] took 1.71 ms against onnxruntime's whole run of 0.46, and GPT-2's tanh Gelu 2.51 against
// 0.92 (kernel times, 1 thread, this 2-core Zen 3 EPYC, while a test run shared the cores). Now
// 1.54 and 1.79 ms: the 8-lane form computes both of fast_tanhf's forms and an exp with a
// division, ~30 cycles for 8 lanes; onnxruntime's is one rational polynomial, so Tanh is still
// ~3x its time here. FMAs in the polynomials measured the same (1.42 ms, within the spread) and
// are not used. Here fast_tanhf's steps (Note [vector
// tanh] in vector_math.h) run on 8 lanes by hand, in its order as written there (mul and add, no
// FMA): the polynomial for |x| < 0.625, 1 - 2 / (e^2|x| + 1) past it (e^ as fast_expf, whose
// argument is >= 0 here: no subnormal path), the sign copied back with one and/or of the sign bit.
// A NaN: |x| < 0.625 is false, and the exp form carries the NaN through. The AVX-512 clones and
// the portable loop stay as they were; tests/test_vector_math.py bounds whichever path runs
// against float64 (4 ulp) and onnxruntime.
#include "backends/cpu/elementwise/tanh_rows_cpu.h"

#include "backends/cpu/elementwise/vector_math.h"
#include "backends/cpu/runtime/avx2_lanes.h"
#include "backends/cpu/runtime/cpu_features.h"
#include "ops/elementwise/unary_math.h"

namespace dnnx {

namespace {

DNNX_VECTOR_CLONES_AVX512 void tanh_rows_clones(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = fast_tanhf(x[i]);
}

DNNX_VECTOR_CLONES_AVX512 void gelu_tanh_rows_clones(const float* x, float* y, int64_t n) {
  using namespace unary_detail;
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + fast_tanhf(kSqrt2OverPi * (v + kGeluCubic * v * v * v)));
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
#define DNNX_TANH_AVX2 1

DNNX_TARGET_AVX2 __attribute__((always_inline)) inline __m256 tanh8(__m256 x) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 a = _mm256_andnot_ps(sign, x);  // |x|
  const __m256 z = _mm256_mul_ps(x, x);
  __m256 p = _mm256_set1_ps(-5.70498872745e-3f);
  p = _mm256_add_ps(_mm256_mul_ps(p, z), _mm256_set1_ps(2.06390887954e-2f));
  p = _mm256_add_ps(_mm256_mul_ps(p, z), _mm256_set1_ps(-5.37397155531e-2f));
  p = _mm256_add_ps(_mm256_mul_ps(p, z), _mm256_set1_ps(1.33314422036e-1f));
  p = _mm256_add_ps(_mm256_mul_ps(p, z), _mm256_set1_ps(-3.33332819422e-1f));
  const __m256 small = _mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(p, z), a), a);
  // fast_expf(2|x|): 2|x| >= 0, so only the upper clamp (a NaN stays: vminps returns its second operand)
  const __m256 v = _mm256_min_ps(_mm256_set1_ps(88.72283f), _mm256_mul_ps(_mm256_set1_ps(2.0f), a));
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 e = exp8_in_normal_range(v);
  const __m256 big = _mm256_sub_ps(one, _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, one)));
  const __m256 magnitude = _mm256_blendv_ps(big, small, _mm256_cmp_ps(a, _mm256_set1_ps(0.625f), _CMP_LT_OQ));
  return _mm256_or_ps(_mm256_andnot_ps(sign, magnitude), _mm256_and_ps(sign, x));  // copysign
}

DNNX_TARGET_AVX2 __attribute__((always_inline)) inline __m256 gelu_tanh8(__m256 v) {
  using namespace unary_detail;
  const __m256 cube = _mm256_mul_ps(_mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(kGeluCubic), v), v), v);
  const __m256 t = tanh8(_mm256_mul_ps(_mm256_set1_ps(kSqrt2OverPi), _mm256_add_ps(v, cube)));
  return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), v), _mm256_add_ps(_mm256_set1_ps(1.0f), t));
}

#endif

}  // namespace

void tanh_rows(const float* x, float* y, int64_t n) {
#ifdef DNNX_TANH_AVX2
  if (cpu_avx2_without_avx512()) return map8<tanh8>(x, y, n);
#endif
  tanh_rows_clones(x, y, n);
}

void gelu_tanh_rows(const float* x, float* y, int64_t n) {
#ifdef DNNX_TANH_AVX2
  if (cpu_avx2_without_avx512()) return map8<gelu_tanh8>(x, y, n);
#endif
  gelu_tanh_rows_clones(x, y, n);
}

}  // namespace dnnx
