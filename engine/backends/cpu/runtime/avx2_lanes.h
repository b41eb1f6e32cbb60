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

}  // namespace dnnx
#endif
