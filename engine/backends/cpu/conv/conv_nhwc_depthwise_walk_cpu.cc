// Note [depthwise column walk]: the depthwise strips (conv_nhwc_tiles_cpu.cc) compute P pixels x
// V vectors and load, per tap, V filter vectors and P x V input vectors, each input vector once
// per tap that reads it: a 3x3 window at stride 1 loads each input vector 3 times per window row.
// The walk takes one 16-channel vector of an output row's interior pixels at a time, P = 16
// pixels a strip (8, 4, 2, 1 for the rest), the window row's S filter vectors in registers: it
// walks the strip's input columns j = 0 .. (P - 1) * SW + S - 1 once, and each column's vector
// feeds the S (pixel, tap) pairs that read it, acc[p] += x[j] * w[kw] for j = p * SW + kw. Each
// pixel's taps still come in the order kh, then kw ascending (for a fixed p, kw grows with j),
// each an FMA into the same accumulator from 0, so every output is the same sum, rounded the
// same way, as on the strips: the same bits as before, whatever the thread count.
// (GCC folds most of the column loads back into the FMAs' memory operands; the gain is from the
// 16-pixel strips over one vector, the filter kept in registers across them, and the bias and
// residual added once per vector.) 1 thread, one conv a model, this 2-core EPYC, kernel ms
// before -> after (onnxruntime's conv): 32 channels 3x3 at 112x112 + Clip 0.181-0.187 ->
// 0.146 (0.124-0.142); 96 at 112x112 stride 2 0.270-0.273 -> 0.214 (0.130-0.153); 144 at 56x56
// 0.220 -> 0.190 (0.150); 240 5x5 at 28x28 0.165-0.187 -> 0.118-0.123 (0.115). A 7x7 plane's
// 3 or 5 inner pixels were slower walked (1152 channels 5x5: 0.065 -> 0.073 ms), so fewer than
// kDepthwiseWalkMinPixels stay on the strips.
#include "backends/cpu/conv/conv_nhwc_depthwise_walk_cpu.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DNNX_WALK_AVX512 1
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // as in conv_nhwc_tiles_cpu.cc
#endif

namespace dnnx {

#ifdef DNNX_WALK_AVX512
namespace {

#define DNNX_AVX512 __attribute__((target("avx512f")))

// The strips' epilogue (store_lanes in conv_nhwc_tiles_cpu.cc): ((sum + bias) + residual), then
// the clamp (max, min: NaN passes through), into the mask's lanes.
DNNX_AVX512 inline void store(__m512 s, float* dst, __mmask16 mask, const float* bias, const float* residual,
                              const NhwcEpilogue& e) {
  if (bias) s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(mask, bias));
  if (residual) s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(mask, residual));
  if (e.clamp) {
    s = _mm512_max_ps(_mm512_set1_ps(e.lo), s);
    s = _mm512_min_ps(_mm512_set1_ps(e.hi), s);
  }
  _mm512_mask_storeu_ps(dst, mask, s);
}

// One strip: pixels [first, first + P) of the call, channel vector c (X's channel; y, bias and
// residual at the same vector), S taps a window row at stride SW. kFull: all 16 lanes.
template <int P, int S, int SW, bool kFull>
DNNX_AVX512 inline void walk_strip(const DepthwiseStrip& s, int64_t c, __mmask16 mask, const float* w, int64_t first,
                                   float* y, const float* bias, const float* residual, const NhwcEpilogue& e) {
  const int64_t ch = s.channels;
  __m512 acc[P];
#pragma GCC unroll 16
  for (int p = 0; p < P; ++p) acc[p] = _mm512_setzero_ps();
  for (int64_t kh = 0; kh < s.window_rows; ++kh) {
    if (!s.rows[kh]) continue;
    const float* x = s.rows[kh] + (s.iw0 + first * SW) * ch + c;
    const float* wr = w + kh * S * ch + c;
    __m512 wv[S];
#pragma GCC unroll 8
    for (int kw = 0; kw < S; ++kw) wv[kw] = kFull ? _mm512_loadu_ps(wr + kw * ch) : _mm512_maskz_loadu_ps(mask, wr + kw * ch);
    constexpr int kColumns = (P - 1) * SW + S;
#pragma GCC unroll 64
    for (int j = 0; j < kColumns; ++j) {
      const __m512 xv = kFull ? _mm512_loadu_ps(x + j * ch) : _mm512_maskz_loadu_ps(mask, x + j * ch);
#pragma GCC unroll 8
      for (int kw = 0; kw < S; ++kw) {
        const int q = j - kw;  // pixel q / SW reads column j at tap kw
        if (q >= 0 && q % SW == 0 && q / SW < P) acc[q / SW] = _mm512_fmadd_ps(xv, wv[kw], acc[q / SW]);
      }
    }
  }
#pragma GCC unroll 16
  for (int p = 0; p < P; ++p)
    store(acc[p], y + (first + p) * ch, mask, bias, residual ? residual + (first + p) * ch : nullptr, e);
}

template <int S, int SW, bool kFull>
DNNX_AVX512 void walk_vector(const DepthwiseStrip& s, int64_t c, __mmask16 mask, const float* w, float* y, int64_t m,
                             const float* bias, const float* residual, const NhwcEpilogue& e) {
  int64_t first = 0;
  for (; first + 16 <= m; first += 16) walk_strip<16, S, SW, kFull>(s, c, mask, w, first, y, bias, residual, e);
  if (first + 8 <= m) walk_strip<8, S, SW, kFull>(s, c, mask, w, first, y, bias, residual, e), first += 8;
  if (first + 4 <= m) walk_strip<4, S, SW, kFull>(s, c, mask, w, first, y, bias, residual, e), first += 4;
  if (first + 2 <= m) walk_strip<2, S, SW, kFull>(s, c, mask, w, first, y, bias, residual, e), first += 2;
  if (first < m) walk_strip<1, S, SW, kFull>(s, c, mask, w, first, y, bias, residual, e);
}

// Channels [c0, c0 + n), a vector at a time (the last one masked where n % 16 != 0).
template <int S, int SW>
DNNX_AVX512 void walk(const DepthwiseStrip& s, int64_t c0, int64_t n, const float* w, float* y, int64_t m,
                      const NhwcEpilogue& e) {
  for (int64_t k = 0; k < n; k += 16) {
    const float* bias = e.bias ? e.bias + k : nullptr;
    const float* residual = e.residual ? e.residual + k : nullptr;
    if (n - k >= 16) {
      walk_vector<S, SW, true>(s, c0 + k, 0xFFFF, w, y + k, m, bias, residual, e);
    } else {
      const __mmask16 mask = static_cast<__mmask16>((1u << (n - k)) - 1);
      walk_vector<S, SW, false>(s, c0 + k, mask, w, y + k, m, bias, residual, e);
    }
  }
}


// Note [depthwise row walk]: on a 7 or 14 pixel wide output row most pixels are at a border (a
// 5x5 window at 7x7: 4 of 7), and the border pixels ran one a call on the strips, V filter
// vectors loaded per tap and pixel. Where the row's geometry is one of a few fixed ones (ow, W,
// S, SW, PW: EfficientNet's, MobileNet's and ShuffleNet's 7x7 and 14x14 rows), the whole row walks
// as one strip of OW pixels per 16-channel vector: input column j feeds pixel p at tap kw where
// j = p * SW + kw - PW, decided at compile time, and a tap in the padding is skipped as the border
// pixels skip it. Each pixel's taps come in the order kh, kw ascending: the same bits.
template <int OW, int W, int S, int SW, int PW, bool kFull>
DNNX_AVX512 inline void row_vector(const DepthwiseStrip& s, int64_t c, __mmask16 mask, const float* w, float* y,
                                   const float* bias, const float* residual, const NhwcEpilogue& e) {
  const int64_t ch = s.channels;
  __m512 acc[OW];
#pragma GCC unroll 16
  for (int p = 0; p < OW; ++p) acc[p] = _mm512_setzero_ps();
  for (int64_t kh = 0; kh < s.window_rows; ++kh) {
    if (!s.rows[kh]) continue;
    const float* x = s.rows[kh] + c;
    const float* wr = w + kh * S * ch + c;
    __m512 wv[S];
#pragma GCC unroll 8
    for (int kw = 0; kw < S; ++kw) wv[kw] = kFull ? _mm512_loadu_ps(wr + kw * ch) : _mm512_maskz_loadu_ps(mask, wr + kw * ch);
#pragma GCC unroll 32
    for (int j = 0; j < W; ++j) {
      const __m512 xv = kFull ? _mm512_loadu_ps(x + j * ch) : _mm512_maskz_loadu_ps(mask, x + j * ch);
#pragma GCC unroll 8
      for (int kw = 0; kw < S; ++kw) {
        const int q = j - kw + PW;  // pixel q / SW reads column j at tap kw
        if (q >= 0 && q % SW == 0 && q / SW < OW) acc[q / SW] = _mm512_fmadd_ps(xv, wv[kw], acc[q / SW]);
      }
    }
  }
#pragma GCC unroll 16
  for (int p = 0; p < OW; ++p) store(acc[p], y + p * ch, mask, bias, residual ? residual + p * ch : nullptr, e);
}

template <int OW, int W, int S, int SW, int PW>
DNNX_AVX512 void row_walk(const DepthwiseStrip& s, int64_t c0, int64_t n, const float* w, float* y,
                          const NhwcEpilogue& e) {
  for (int64_t k = 0; k < n; k += 16) {
    const float* bias = e.bias ? e.bias + k : nullptr;
    const float* residual = e.residual ? e.residual + k : nullptr;
    if (n - k >= 16) {
      row_vector<OW, W, S, SW, PW, true>(s, c0 + k, 0xFFFF, w, y + k, bias, residual, e);
    } else {
      const __mmask16 mask = static_cast<__mmask16>((1u << (n - k)) - 1);
      row_vector<OW, W, S, SW, PW, false>(s, c0 + k, mask, w, y + k, bias, residual, e);
    }
  }
}

}  // namespace
#endif

bool nhwc_depthwise_walk(const DepthwiseStrip& s, int64_t c0, int64_t n, const float* w, float* y, int64_t m,
                         const NhwcEpilogue& e) {
#ifdef DNNX_WALK_AVX512
  if (!nhwc_tiles_have_avx512() || m < kDepthwiseWalkMinPixels || s.dw != 1 || s.kw_lo != 0 ||
      s.kw_hi != s.window_cols) {
    return false;
  }
  switch (s.window_cols * 10 + s.sw) {
    case 31: walk<3, 1>(s, c0, n, w, y, m, e); return true;
    case 32: walk<3, 2>(s, c0, n, w, y, m, e); return true;
    case 51: walk<5, 1>(s, c0, n, w, y, m, e); return true;
    case 52: walk<5, 2>(s, c0, n, w, y, m, e); return true;
    case 71: walk<7, 1>(s, c0, n, w, y, m, e); return true;
    default: return false;
  }
#else
  return false;
#endif
}


bool nhwc_depthwise_row_walk(const DepthwiseStrip& s, int64_t c0, int64_t n, const float* w, float* y, int64_t ow,
                             int64_t width, int64_t pad, const NhwcEpilogue& e) {
#ifdef DNNX_WALK_AVX512
  if (!nhwc_tiles_have_avx512() || s.dw != 1) return false;
  // ow, W, S, SW, PW: the same-padded rows of stride 1 and 2
  const auto is = [&](int64_t o, int64_t wi, int64_t k, int64_t st, int64_t p) {
    return ow == o && width == wi && s.window_cols == k && s.sw == st && pad == p;
  };
  if (is(7, 7, 3, 1, 1)) return row_walk<7, 7, 3, 1, 1>(s, c0, n, w, y, e), true;
  if (is(7, 7, 5, 1, 2)) return row_walk<7, 7, 5, 1, 2>(s, c0, n, w, y, e), true;
  if (is(14, 14, 3, 1, 1)) return row_walk<14, 14, 3, 1, 1>(s, c0, n, w, y, e), true;
  if (is(14, 14, 5, 1, 2)) return row_walk<14, 14, 5, 1, 2>(s, c0, n, w, y, e), true;
  if (is(7, 14, 3, 2, 1)) return row_walk<7, 14, 3, 2, 1>(s, c0, n, w, y, e), true;
  if (is(7, 14, 5, 2, 2)) return row_walk<7, 14, 5, 2, 2>(s, c0, n, w, y, e), true;
  return false;
#else
  return false;
#endif
}

}  // namespace dnnx
