// Note [8-bit pool rows] (max_pool_bytes_cpu.h).
#include "backends/cpu/pool/max_pool_bytes_cpu.h"

#include <immintrin.h>

namespace dnnx {

BytePoolRows plan_byte_pool_rows(const ConvGeometry& g) {
  BytePoolRows p;
  const int64_t in_w = g.input[2], out_w = g.output[2], k = g.kernel[2];
  const bool vbmi = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                    __builtin_cpu_supports("avx512vbmi");
  if (!vbmi || in_w > 128 || out_w > 64 || in_w < 1) return p;
  p.in_w = in_w;
  p.out_w = out_w;
  p.index.assign(static_cast<size_t>(k * 64), 0);
  p.valid.assign(static_cast<size_t>(k), 0);
  for (int64_t t = 0; t < k; ++t) {
    for (int64_t ow = 0; ow < out_w; ++ow) {
      const int64_t col = g.window_start(2, ow) + t * g.dilations[2];
      if (col < 0 || col >= in_w) continue;
      p.index[static_cast<size_t>(t * 64 + ow)] = static_cast<uint8_t>(col);
      p.valid[static_cast<size_t>(t)] |= uint64_t{1} << ow;
    }
  }
  return p;
}

namespace {

template <bool kSigned>
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void byte_row(const BytePoolRows& p, const uint8_t* src,
                                                                     uint8_t* y) {
  auto bits = [](int64_t n) { return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1; };
  const __m512i lo = _mm512_maskz_loadu_epi8(bits(p.in_w), src);  // masked: no byte past the row is read
  const __m512i hi = p.in_w > 64 ? _mm512_maskz_loadu_epi8(bits(p.in_w - 64), src + 64) : _mm512_setzero_si512();
  // the type's lowest value: an output with no column inside the row keeps it, as in the generic path
  __m512i acc = _mm512_set1_epi8(kSigned ? -128 : 0);
  for (size_t t = 0; t < p.valid.size(); ++t) {
    const __m512i idx = _mm512_loadu_si512(p.index.data() + t * 64);
    const __m512i v = _mm512_permutex2var_epi8(lo, idx, hi);
    const __m512i m = kSigned ? _mm512_max_epi8(acc, v) : _mm512_max_epu8(acc, v);
    acc = _mm512_mask_mov_epi8(acc, p.valid[t], m);
  }
  _mm512_mask_storeu_epi8(y, bits(p.out_w), acc);
}

}  // namespace

void pool_byte_row(const BytePoolRows& p, const uint8_t* src, bool is_signed, uint8_t* y) {
  if (is_signed) byte_row<true>(p, src, y);
  else byte_row<false>(p, src, y);
}

}  // namespace dnnx
