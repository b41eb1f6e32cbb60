// Note [sigmoid rows]: sigmoidf (1 / (1 + e^-x), fast_expf's polynomial with the subnormal path
// left out: Note [exp without subnormals] in runtime/fast_math.h) over runs of floats. Where the
// CPU has AVX-512 the loop is written in intrinsics, one vector of 16 at a time, the tail under a
// mask. The compiler's own vectorization of the scalar function (a DNNX_VECTOR_CLONES_AVX512 loop)
// kept every clamp as compare-and-blend and, for SiLU, needed two loops through a stack buffer
// (Note [swish in two loops] below); the intrinsic loop does SiLU in one pass. Measured on this 2-core EPYC (Zen 4), one thread, 65,536 floats in L2, best of 30: SiLU
// 0.395 -> 0.311 ns an element; EfficientNet-B0 runs ~7M SiLU elements a call (bench/RESULTS.md,
// session 13). The arithmetic is sigmoidf's step for step (the clamps keep a NaN, as std::max and
// std::min do with it first; n is a whole number, so truncating it is exact); both functions
// below call the same vector step in this one file, so SiLU's sigmoid is Sigmoid's, bit for bit,
// on any machine. Without AVX-512 both run the same steps on 8 lanes where the CPU has AVX2
// (Note [sigmoid rows in avx2]), else the scalar function's clone loops.
#include "backends/cpu/elementwise/sigmoid_rows_cpu.h"

#include <algorithm>

#include "backends/cpu/elementwise/activation_cpu.h"
#include "backends/cpu/runtime/avx2_lanes.h"
#include "backends/cpu/runtime/fast_math.h"
#include "backends/cpu/runtime/cpu_features.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define DNNX_SIGMOID_AVX512 1
#include <immintrin.h>
#else
#define DNNX_SIGMOID_AVX512 0
#endif

namespace dnnx {

namespace {

DNNX_VECTOR_CLONES_AVX512 void sigmoid_rows_portable(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = sigmoidf(x[i]);
}

DNNX_VECTOR_CLONES_AVX512 void sigmoid_block(const float* x, float* s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) s[i] = sigmoidf(x[i]);
}

DNNX_VECTOR_CLONES_AVX512 void multiply_block(const float* s, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = y[i] * s[i];
}

// y * sigmoid(y) in blocks of 256, where there is no AVX-512: the sigmoids into a stack buffer,
// then the products. Note [swish in two loops]: the one-loop form y[i] = y[i] * sigmoidf(y[i])
// compiled (GCC, -O3, AVX2) to code 10x slower than the two loops (7.9 against 0.65 ms over 1.2M
// floats, measured in isolation), slower than the unfused pair.
void swish_rows_portable(float* y, int64_t n) {
  constexpr int64_t kBlock = 256;
  float s[kBlock];
  for (int64_t begin = 0; begin < n; begin += kBlock) {
    const int64_t m = std::min(kBlock, n - begin);
    sigmoid_block(y + begin, s, m);
    multiply_block(s, y + begin, m);
  }
}

#if DNNX_SIGMOID_AVX512
#define DNNX_AVX512_FN __attribute__((target("avx512f,avx2,fma")))

// sigmoidf of 16 lanes: 1 / (1 + e^-x), e^-x as expf_in_normal_range of -x clamped.
DNNX_AVX512_FN __attribute__((always_inline)) inline __m512 sigmoid16(__m512 x) {
  __m512 v = _mm512_sub_ps(_mm512_setzero_ps(), x);  // -x
  v = _mm512_max_ps(_mm512_set1_ps(-86.6f), v);      // std::max(v, lo): a NaN v stays
  v = _mm512_min_ps(_mm512_set1_ps(88.72283f), v);   // std::min(v, hi): likewise
  const __m512 t = _mm512_mul_ps(v, _mm512_set1_ps(1.44269504088896341f));
  const __m512 round = _mm512_set1_ps(12582912.0f);
  const __m512 n = _mm512_sub_ps(_mm512_add_ps(t, round), round);
  const __m512 r = _mm512_add_ps(_mm512_sub_ps(v, _mm512_mul_ps(n, _mm512_set1_ps(0.693359375f))),
                                 _mm512_mul_ps(n, _mm512_set1_ps(2.12194440e-4f)));
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_add_ps(_mm512_mul_ps(p, r), _mm512_set1_ps(5.0000001201e-1f));
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 er = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(_mm512_mul_ps(p, r), r), r), one);
  const __m512i bits = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvttps_epi32(n), _mm512_set1_epi32(126)), 23);
  const __m512 e = _mm512_mul_ps(_mm512_mul_ps(er, _mm512_castsi512_ps(bits)), _mm512_set1_ps(2.0f));
  return _mm512_div_ps(one, _mm512_add_ps(one, e));
}

DNNX_AVX512_FN void sigmoid_rows_avx512(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, sigmoid16(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 live = static_cast<__mmask16>((1u << (n - i)) - 1u);
    _mm512_mask_storeu_ps(y + i, live, sigmoid16(_mm512_maskz_loadu_ps(live, x + i)));
  }
}

DNNX_AVX512_FN void swish_rows_avx512(float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(y + i);
    _mm512_storeu_ps(y + i, _mm512_mul_ps(v, sigmoid16(v)));
  }
  if (i < n) {
    const __mmask16 live = static_cast<__mmask16>((1u << (n - i)) - 1u);
    const __m512 v = _mm512_maskz_loadu_ps(live, y + i);
    _mm512_mask_storeu_ps(y + i, live, _mm512_mul_ps(v, sigmoid16(v)));
  }
}

bool sigmoid_avx512_usable() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}

// Note [sigmoid rows in avx2]: sigmoid16's steps on 8 lanes, for a CPU with AVX2 but no AVX-512,
// where the clone loops above ran: a Sigmoid over 1.2M floats took 1.97 ms against onnxruntime's
// 0.82 (whole runs, 1 thread, this 2-core Zen 3 EPYC, while a build shared its cores), and its
// kernel now 0.91 ms (onnxruntime's whole run 0.67, quiet); EfficientNet-B0's convs' SiLU is ~7M
// elements a call. The
// same operations in the same order as sigmoid16 (mul and add, no FMA), so Sigmoid's and SiLU's
// values are those of the AVX-512 loops, bit for bit; the tail through vmaskmovps.
#define DNNX_AVX2_FN __attribute__((target("avx2,fma")))

DNNX_AVX2_FN __attribute__((always_inline)) inline __m256 sigmoid8(__m256 x) {
  __m256 v = _mm256_sub_ps(_mm256_setzero_ps(), x);  // -x
  v = _mm256_max_ps(_mm256_set1_ps(-86.6f), v);      // std::max(v, lo): a NaN v stays
  v = _mm256_min_ps(_mm256_set1_ps(88.72283f), v);   // std::min(v, hi): likewise
  const __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(one, _mm256_add_ps(one, exp8_in_normal_range(v)));
}

DNNX_AVX2_FN __attribute__((always_inline)) inline __m256 swish8(__m256 v) { return _mm256_mul_ps(v, sigmoid8(v)); }

DNNX_AVX2_FN void sigmoid_rows_avx2(const float* x, float* y, int64_t n) { map8<sigmoid8>(x, y, n); }
DNNX_AVX2_FN void swish_rows_avx2(float* y, int64_t n) { map8<swish8>(y, y, n); }

bool sigmoid_avx2_usable() { return cpu_has_avx2_fma(); }
#endif

}  // namespace

void sigmoid_rows(const float* x, float* y, int64_t n) {
#if DNNX_SIGMOID_AVX512
  if (sigmoid_avx512_usable()) return sigmoid_rows_avx512(x, y, n);
  if (sigmoid_avx2_usable()) return sigmoid_rows_avx2(x, y, n);  // Note [sigmoid rows in avx2]
#endif
  sigmoid_rows_portable(x, y, n);
}

void swish_rows(float* y, int64_t n) {
#if DNNX_SIGMOID_AVX512
  if (sigmoid_avx512_usable()) return swish_rows_avx512(y, n);
  if (sigmoid_avx2_usable()) return swish_rows_avx2(y, n);
#endif
  swish_rows_portable(y, n);
}

}  // namespace dnnx
