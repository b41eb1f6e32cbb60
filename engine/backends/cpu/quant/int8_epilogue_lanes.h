// The int8 epilogue's arithmetic on 16 lanes of AVX-512 (int8_epilogue_cpu.h gives the steps):
// shared by the row forms (int8_epilogue_cpu.cc: one output channel's sums along a row, its
// factors broadcast) and the channels-last conv (int8_conv_nhwc_cpu.cc: one pixel's 16 channels,
// each lane its own channel's factors). The same operations in the same order, so both give the
// same bits. No FMA: a file that includes this sets `#pragma GCC optimize("fp-contract=off")`
// before it (GCC fused the multiplies and adds under the AVX-512 targets).
#pragma once
#include <immintrin.h>

#include "backends/cpu/quant/int8_epilogue_cpu.h"

namespace dnnx::int8_epilogue {

// v = float(sum + ibias) * mult + add, clamped to Y's range less its zero point, rounded half to
// even (vcvtps2dq), plus the zero point: 16 int32 results (Y's values).
struct RequantizeLanes {
  __m512 lo, hi;
  __m512i zp;

  __attribute__((target("avx512f"))) explicit RequantizeLanes(const QuantRange& q)
      : lo(_mm512_set1_ps(static_cast<float>(q.lo - q.zp))),
        hi(_mm512_set1_ps(static_cast<float>(q.hi - q.zp))),
        zp(_mm512_set1_epi32(q.zp)) {}

  // a: the lanes' sums plus their int32 bias
  __attribute__((target("avx512f"), always_inline)) inline __m512i apply(__m512i a, __m512 mult, __m512 add) const {
    __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(a), mult), add);  // no FMA: onnxruntime rounds twice
    v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    return _mm512_add_epi32(_mm512_cvtps_epi32(v), zp);
  }
};

// Residual lanes: r requantized (no zero point: r - r_zp), then QLinearAdd's sum with z (8-bit,
// signed or not), clamped to Y's range: 16 int32 results (Y's values). The intermediate r is
// rounded in float (vrndscaleps, half to even as vcvtps2dq: the same integer).
struct ResidualLanes {
  __m512 rlo, rhi, sr, sz, yzp, ylo, yhi;
  __m512i zzp;
  bool z_signed;

  __attribute__((target("avx512f,avx512bw,avx512vl"))) ResidualLanes(const QuantRange& rq, bool zs,
                                                                     const ResidualParams& rp, const QuantRange& yq)
      : rlo(_mm512_set1_ps(static_cast<float>(rq.lo - rq.zp))),
        rhi(_mm512_set1_ps(static_cast<float>(rq.hi - rq.zp))),
        sr(_mm512_set1_ps(rp.r_ratio())),
        sz(_mm512_set1_ps(rp.z_ratio())),
        yzp(_mm512_set1_ps(static_cast<float>(yq.zp))),
        ylo(_mm512_set1_ps(static_cast<float>(yq.lo))),
        yhi(_mm512_set1_ps(static_cast<float>(yq.hi))),
        zzp(_mm512_set1_epi32(rp.z_zp)),
        z_signed(zs) {}

  // a: the lanes' sums plus their int32 bias; zraw: z's 16 bytes
  __attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline __m512i apply(
      __m512i a, __m128i zraw, __m512 mult, __m512 add) const {
    __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(a), mult), add);  // no FMA: onnxruntime rounds twice
    v = _mm512_min_ps(_mm512_max_ps(v, rlo), rhi);
    const __m512 r = _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);  // r - r_zp
    const __m512i zv = _mm512_sub_epi32(z_signed ? _mm512_cvtepi8_epi32(zraw) : _mm512_cvtepu8_epi32(zraw), zzp);
    const __m512 sum = _mm512_add_ps(_mm512_mul_ps(sr, r), _mm512_mul_ps(sz, _mm512_cvtepi32_ps(zv)));
    const __m512 y = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(sum, yzp), ylo), yhi);
    return _mm512_cvtps_epi32(y);
  }
};

}  // namespace dnnx::int8_epilogue
