// Partial AVX2 vectors: the first `valid` of 8 float lanes, loaded and stored with plain moves
// where all 8 are valid and masked moves (vmaskmovps) only for the tail, which is slow to store
// on AMD's cores. Masked lanes are never touched, so a row's tail may end at its buffer's end.
#pragma once
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#define DNNX_TARGET_AVX2 __attribute__((target("avx2,fma")))

namespace dnnx {

// Lanes [0, valid) of 8 (valid clamped to [0, 8]) as a vmaskmovps mask.
DNNX_TARGET_AVX2 inline __m256i lanes8(int64_t valid) {
  const int v = static_cast<int>(std::clamp<int64_t>(valid, 0, 8));
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(v), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// 8 floats at p where `full`, else the mask's lanes (the others 0).
DNNX_TARGET_AVX2 inline __m256 load8(const float* p, __m256i mask, bool full) {
  return full ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, mask);
}

DNNX_TARGET_AVX2 inline void store8(float* p, __m256 v, __m256i mask, bool full) {
  if (full) {
    _mm256_storeu_ps(p, v);
  } else {
    _mm256_maskstore_ps(p, mask, v);
  }
}

// y[i] = F(x[i]) over n floats, 8 at a time, the tail through masked moves (x and y may be the
// same array): the row loop of the 8-lane elementwise kernels.
template <__m256 (*F)(__m256)>
DNNX_TARGET_AVX2 inline void map8(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, F(_mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i live = lanes8(n - i);
    _mm256_maskstore_ps(y + i, live, F(_mm256_maskload_ps(x + i, live)));
  }
}

// expf_in_normal_range (runtime/fast_math.h) on 8 lanes, v already in [-86.6, 88.72283]: its
// range reduction, polynomial and 2^(n-1) * 2, in its order as written (mul and add, no FMA).
// Shared by the Sigmoid, Exp and Tanh rows (elementwise/*_rows_cpu.cc).
DNNX_TARGET_AVX2 __attribute__((always_inline)) inline __m256 exp8_in_normal_range(__m256 v) {
  const __m256 t = _mm256_mul_ps(v, _mm256_set1_ps(1.44269504088896341f));
  const __m256 round = _mm256_set1_ps(12582912.0f);  // 1.5 * 2^23: round to nearest
  const __m256 n = _mm256_sub_ps(_mm256_add_ps(t, round), round);
  const __m256 r = _mm256_add_ps(_mm256_sub_ps(v, _mm256_mul_ps(n, _mm256_set1_ps(0.693359375f))),
                                 _mm256_mul_ps(n, _mm256_set1_ps(2.12194440e-4f)));
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(5.0000001201e-1f));
  const __m256 er = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(p, r), r), r), _mm256_set1_ps(1.0f));
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(n), _mm256_set1_epi32(126)), 23);
  return _mm256_mul_ps(_mm256_mul_ps(er, _mm256_castsi256_ps(bits)), _mm256_set1_ps(2.0f));
}

}  // namespace dnnx
#endif
