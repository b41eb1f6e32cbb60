// Note [vnni column tails] (int8_vnni_tile_cpu.h). Each step: a k group of 4 bytes of each of the
// 8 rows of W broadcast, times the panel's 4 bytes of each column (vpdpbusd: 4 products summed
// into each column's int32).
#include "backends/cpu/quant/int8_vnni_tile_cpu.h"

#include <immintrin.h>

#include <cstring>

namespace dnnx {

namespace {

// Named accumulators, not an array: GCC kept an array's 16 zmm sums moving between registers
// every step (two vmovdqa per vpdpbusd).
#define DNNX_VNNI_ROW(r, c0, c1)                                    \
  {                                                                 \
    int32_t four;                                                   \
    std::memcpy(&four, wk + (r) * 4, 4);                            \
    const __m512i w = _mm512_set1_epi32(four);                      \
    c0 = _mm512_dpbusd_epi32(c0, b0, w);                            \
    c1 = _mm512_dpbusd_epi32(c1, b1, w);                            \
  }

// 32 columns: 2 zmm of sums a row, 16 chains.
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void wide_tile(const int8_t* wp, const uint8_t* bp, int64_t k4,
                                                                         int32_t* out) {
  __m512i c00 = _mm512_setzero_si512(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00,
          c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00, c61 = c00, c70 = c00, c71 = c00;
  for (int64_t p = 0; p < k4; ++p) {
    const __m512i b0 = _mm512_loadu_si512(bp + p * 128);
    const __m512i b1 = _mm512_loadu_si512(bp + p * 128 + 64);
    const int8_t* wk = wp + p * kVnniRows * 4;
    DNNX_VNNI_ROW(0, c00, c01)
    DNNX_VNNI_ROW(1, c10, c11)
    DNNX_VNNI_ROW(2, c20, c21)
    DNNX_VNNI_ROW(3, c30, c31)
    DNNX_VNNI_ROW(4, c40, c41)
    DNNX_VNNI_ROW(5, c50, c51)
    DNNX_VNNI_ROW(6, c60, c61)
    DNNX_VNNI_ROW(7, c70, c71)
  }
  const __m512i sums[16] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51, c60, c61, c70, c71};
  for (int i = 0; i < 16; ++i) _mm512_storeu_si512(out + 16 * i, sums[i]);
}
#undef DNNX_VNNI_ROW

#define DNNX_VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"), always_inline)) inline
DNNX_VNNI_TARGET __m512i load(const uint8_t* at, __m512i) { return _mm512_loadu_si512(at); }
DNNX_VNNI_TARGET __m256i load(const uint8_t* at, __m256i) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at)); }
DNNX_VNNI_TARGET __m512i dot(__m512i acc, __m512i b, const int8_t* w4) {
  int32_t four;
  std::memcpy(&four, w4, 4);
  return _mm512_dpbusd_epi32(acc, b, _mm512_set1_epi32(four));
}
DNNX_VNNI_TARGET __m256i dot(__m256i acc, __m256i b, const int8_t* w4) {
  int32_t four;
  std::memcpy(&four, w4, 4);
  return _mm256_dpbusd_epi32(acc, b, _mm256_set1_epi32(four));
}
// int32 lanes (GCC's + on __m512i / __m256i adds int64 lanes: a carry would cross columns)
DNNX_VNNI_TARGET __m512i add32(__m512i a, __m512i b) { return _mm512_add_epi32(a, b); }
DNNX_VNNI_TARGET __m256i add32(__m256i a, __m256i b) { return _mm256_add_epi32(a, b); }
DNNX_VNNI_TARGET void store(int32_t* at, __m512i v) { _mm512_storeu_si512(at, v); }
DNNX_VNNI_TARGET void store(int32_t* at, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(at), v); }
#undef DNNX_VNNI_TARGET

// One register of sums a row (a zmm: 16 columns, a ymm: 8): 8 chains of vpdpbusd only, which
// wait on its latency (the ymm form ran at 59% of peak), so even and odd k groups go to two
// sets of sums, added at the end (wrapping int32 sums: the same bits in any order).
template <class V, int kLanes>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) void narrow_tile(const int8_t* wp, const uint8_t* bp,
                                                                                 int64_t k4, int32_t* out) {
  constexpr int64_t kStep = kLanes * 4;  // B's bytes per k group
  V e0{}, e1{}, e2{}, e3{}, e4{}, e5{}, e6{}, e7{}, o0{}, o1{}, o2{}, o3{}, o4{}, o5{}, o6{}, o7{};
  int64_t p = 0;
  for (; p + 2 <= k4; p += 2) {
    const V be = load(bp + p * kStep, V{}), bo = load(bp + (p + 1) * kStep, V{});
    const int8_t* we = wp + p * kVnniRows * 4;
    const int8_t* wo = we + kVnniRows * 4;
    e0 = dot(e0, be, we), o0 = dot(o0, bo, wo);
    e1 = dot(e1, be, we + 4), o1 = dot(o1, bo, wo + 4);
    e2 = dot(e2, be, we + 8), o2 = dot(o2, bo, wo + 8);
    e3 = dot(e3, be, we + 12), o3 = dot(o3, bo, wo + 12);
    e4 = dot(e4, be, we + 16), o4 = dot(o4, bo, wo + 16);
    e5 = dot(e5, be, we + 20), o5 = dot(o5, bo, wo + 20);
    e6 = dot(e6, be, we + 24), o6 = dot(o6, bo, wo + 24);
    e7 = dot(e7, be, we + 28), o7 = dot(o7, bo, wo + 28);
  }
  if (p < k4) {  // a last lone k group
    const V be = load(bp + p * kStep, V{});
    const int8_t* we = wp + p * kVnniRows * 4;
    e0 = dot(e0, be, we), e1 = dot(e1, be, we + 4), e2 = dot(e2, be, we + 8), e3 = dot(e3, be, we + 12);
    e4 = dot(e4, be, we + 16), e5 = dot(e5, be, we + 20), e6 = dot(e6, be, we + 24), e7 = dot(e7, be, we + 28);
  }
  const V sums[8] = {add32(e0, o0), add32(e1, o1), add32(e2, o2), add32(e3, o3),
                     add32(e4, o4), add32(e5, o5), add32(e6, o6), add32(e7, o7)};
  for (int r = 0; r < 8; ++r) store(out + r * kLanes, sums[r]);
}


}  // namespace

void vnni_tile(int64_t width, const int8_t* wp, const uint8_t* bp, int64_t k4, int32_t* out) {
  switch (width) {
    case 32: wide_tile(wp, bp, k4, out); break;
    case 16: narrow_tile<__m512i, 16>(wp, bp, k4, out); break;
    default: narrow_tile<__m256i, 8>(wp, bp, k4, out); break;
  }
}

}  // namespace dnnx
