// Note: the arithmetic is quantize_bytes_cpu.h's; tests/test_quant_linear.py compares it with
// onnxruntime on values at ties, NaN, infinities and past the range.
#include "backends/cpu/quant/quantize_bytes_cpu.h"

#include "backends/cpu/quant/int8_gemm_cpu.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

namespace dnnx {

namespace {

void quantize_portable(const float* x, int64_t n, float scale, int32_t zp, bool is_signed, uint8_t* y) {
  const float lo = is_signed ? -128.0f : 0.0f, hi = is_signed ? 127.0f : 255.0f;
  for (int64_t j = 0; j < n; ++j) {
    const float r = std::nearbyint(x[j] / scale) + static_cast<float>(zp);
    const int32_t q = std::isnan(r) ? 0 : static_cast<int32_t>(std::min(std::max(r, lo), hi));
    y[j] = static_cast<uint8_t>(q);  // int8 and uint8: the low byte
  }
}

__attribute__((target("avx512f,avx512bw"))) void quantize_avx512(const float* x, int64_t n, float scale, int32_t zp,
                                                                 bool is_signed, uint8_t* y) {
  const __m512 s = _mm512_set1_ps(scale), z = _mm512_set1_ps(static_cast<float>(zp));
  const __m512 lo = _mm512_set1_ps(is_signed ? -128.0f : 0.0f), hi = _mm512_set1_ps(is_signed ? 127.0f : 255.0f);
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const __m512 v = _mm512_div_ps(_mm512_loadu_ps(x + j), s);
    const __m512 r = _mm512_add_ps(_mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), z);
    const __mmask16 ordered = _mm512_cmp_ps_mask(r, r, _CMP_ORD_Q);
    const __m512 c = _mm512_maskz_mov_ps(ordered, _mm512_min_ps(_mm512_max_ps(r, lo), hi));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + j), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(c)));
  }
  quantize_portable(x + j, n - j, scale, zp, is_signed, y + j);
}

__attribute__((target("avx2"))) __m256i quantize8_avx2(const float* x, __m256 s, __m256 z, __m256 lo, __m256 hi) {
  const __m256 v = _mm256_div_ps(_mm256_loadu_ps(x), s);
  const __m256 r = _mm256_add_ps(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), z);
  const __m256 ordered = _mm256_cmp_ps(r, r, _CMP_ORD_Q);
  return _mm256_cvtps_epi32(_mm256_and_ps(ordered, _mm256_min_ps(_mm256_max_ps(r, lo), hi)));
}

__attribute__((target("avx2"))) void quantize_avx2(const float* x, int64_t n, float scale, int32_t zp, bool is_signed,
                                                  uint8_t* y) {
  const __m256 s = _mm256_set1_ps(scale), z = _mm256_set1_ps(static_cast<float>(zp));
  const __m256 lo = _mm256_set1_ps(is_signed ? -128.0f : 0.0f), hi = _mm256_set1_ps(is_signed ? 127.0f : 255.0f);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  int64_t j = 0;
  for (; j + 32 <= n; j += 32) {
    const __m256i a = quantize8_avx2(x + j, s, z, lo, hi), b = quantize8_avx2(x + j + 8, s, z, lo, hi);
    const __m256i c = quantize8_avx2(x + j + 16, s, z, lo, hi), d = quantize8_avx2(x + j + 24, s, z, lo, hi);
    const __m256i ab = _mm256_packs_epi32(a, b), cd = _mm256_packs_epi32(c, d);  // in range: no saturation
    const __m256i bytes = is_signed ? _mm256_packs_epi16(ab, cd) : _mm256_packus_epi16(ab, cd);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + j), _mm256_permutevar8x32_epi32(bytes, order));
  }
  quantize_portable(x + j, n - j, scale, zp, is_signed, y + j);
}

}  // namespace

void quantize_float_to_8bit(const float* x, int64_t n, float scale, int32_t zero_point, bool is_signed, void* y) {
  // the int8 GEMM's path (DNNX_INT8_AVX2=1 etc.) picks the form too: tests run each
  static const Int8Path path = default_int8_path();
  static const bool avx512 = int8_avx512(path) && __builtin_cpu_supports("avx512bw");
  static const bool avx2 = path != Int8Path::Portable;
  auto* out = static_cast<uint8_t*>(y);
  if (avx512) quantize_avx512(x, n, scale, zero_point, is_signed, out);
  else if (avx2) quantize_avx2(x, n, scale, zero_point, is_signed, out);
  else quantize_portable(x, n, scale, zero_point, is_signed, out);
}

}  // namespace dnnx
