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
//
// Note [depthwise row walk]: the walk took a row's interior only, and its border pixels ran one a
// call on the strips, V filter vectors loaded per tap and pixel: on a 7- or 14-pixel row most of
// the work (a 5x5 window at 7x7: 4 pixels of 7). Now the whole row walks, per 16-channel vector,
// where its padding is at most 3 columns a side: a 7- or 14-pixel row of the fixed geometries
// below as one strip; a longer one as a left strip of 8, the interior, a right strip of 8, each
// strip over every vector of the channel block before the next (a pixel's vectors are adjacent
// cache lines: 240 channels 5x5 at 28x28 0.100 -> 0.094 ms against vector by vector). An
// edge strip's columns in the padding are skipped at compile time (PL, PR), as the border pixels
// skipped those taps: each pixel's taps still come in the order kh, kw ascending, the same bits.
// 1 thread, one conv a model, kernel ms before -> after (onnxruntime's conv): 1152 channels 5x5
// at 7x7 0.072 -> 0.025 (0.040); 960 3x3 at 7x7 0.027 -> 0.014 (0.018); 480 3x3 at 14x14 0.048
// -> 0.027 (0.037); 672 5x5 at 14x14 0.137 -> 0.060 (0.097); rows of 28: 240 5x5 0.125 ->
// 0.103 (0.116), 3x3 0.073 -> 0.067 (0.053); of 56, 144 3x3: 0.156 -> 0.149 (0.105).
#include "backends/cpu/conv/conv_nhwc_depthwise_walk_cpu.h"

#include <algorithm>

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
// residual at the same vector), S taps a window row at stride SW. The strip's columns are
// j = 0 .. (P - 1) * SW + S - 1 from the first pixel's first tap; the first PL and the last PR
// of them are in the padding (a row's edges: Note [depthwise row walk]) and are skipped, as the
// border pixels skip them. kFull: all 16 lanes.
template <int P, int S, int SW, int PL, int PR, bool kFull>
DNNX_AVX512 inline void walk_strip(const DepthwiseStrip& s, int64_t c, __mmask16 mask, const float* w, int64_t first,
                                   float* y, const float* bias, const float* residual, const NhwcEpilogue& e) {
  const int64_t ch = s.channels;
  __m512 acc[P];
#pragma GCC unroll 16
  for (int p = 0; p < P; ++p) acc[p] = _mm512_setzero_ps();
  for (int64_t kh = 0; kh < s.window_rows; ++kh) {
    if (!s.rows[kh]) continue;
    const float* x = s.rows[kh] + (s.iw0 + first * SW) * ch + c;  // column j at x + j * ch
    const float* wr = w + kh * S * ch + c;
    __m512 wv[S];
#pragma GCC unroll 8
    for (int kw = 0; kw < S; ++kw) wv[kw] = kFull ? _mm512_loadu_ps(wr + kw * ch) : _mm512_maskz_loadu_ps(mask, wr + kw * ch);
    constexpr int kColumns = (P - 1) * SW + S;
#pragma GCC unroll 64
    for (int j = PL; j < kColumns - PR; ++j) {
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

// Where the strips of one channel vector go: its lanes, and y, bias and residual at the vector.
struct WalkVector {
  int64_t c;
  __mmask16 mask;
  float* y;
  const float* bias;
  const float* residual;
};

// m interior pixels: strips of 16, then 8, 4, 2, 1.
template <int S, int SW, bool kFull>
DNNX_AVX512 void walk_interior(const DepthwiseStrip& s, const WalkVector& v, const float* w, int64_t first, int64_t m,
                               const NhwcEpilogue& e) {
  const int64_t end = first + m;
  for (; first + 16 <= end; first += 16) walk_strip<16, S, SW, 0, 0, kFull>(s, v.c, v.mask, w, first, v.y, v.bias, v.residual, e);
  if (first + 8 <= end) walk_strip<8, S, SW, 0, 0, kFull>(s, v.c, v.mask, w, first, v.y, v.bias, v.residual, e), first += 8;
  if (first + 4 <= end) walk_strip<4, S, SW, 0, 0, kFull>(s, v.c, v.mask, w, first, v.y, v.bias, v.residual, e), first += 4;
  if (first + 2 <= end) walk_strip<2, S, SW, 0, 0, kFull>(s, v.c, v.mask, w, first, v.y, v.bias, v.residual, e), first += 2;
  if (first < end) walk_strip<1, S, SW, 0, 0, kFull>(s, v.c, v.mask, w, first, v.y, v.bias, v.residual, e);
}

// A whole row of exactly OW pixels (7 or 14) as one strip, PL and PR padded columns.
template <int OW, int S, int SW, int PL, int PR, bool kFull>
DNNX_AVX512 void walk_short_row(const DepthwiseStrip& s, const WalkVector& v, const float* w, int64_t, int64_t,
                                const NhwcEpilogue& e) {
  walk_strip<OW, S, SW, PL, PR, kFull>(s, v.c, v.mask, w, 0, v.y, v.bias, v.residual, e);
}

// Channels [c0, c0 + n), a vector at a time (the last one masked where n % 16 != 0):
// fn<true> or fn<false>(s, vector, w, a, b, e).
template <template <bool> class Fn>
DNNX_AVX512 void each_vector(const DepthwiseStrip& s, int64_t c0, int64_t n, const float* w, float* y, int64_t a,
                             int64_t b, const NhwcEpilogue& e) {
  for (int64_t k = 0; k < n; k += 16) {
    WalkVector v{c0 + k, 0xFFFF, y + k, e.bias ? e.bias + k : nullptr, e.residual ? e.residual + k : nullptr};
    if (n - k >= 16) {
      Fn<true>::run(s, v, w, a, b, e);
    } else {
      v.mask = static_cast<__mmask16>((1u << (n - k)) - 1);
      Fn<false>::run(s, v, w, a, b, e);
    }
  }
}

template <int S, int SW>
struct Interior {
  template <bool kFull>
  struct Fn {
    DNNX_AVX512 static void run(const DepthwiseStrip& s, const WalkVector& v, const float* w, int64_t m, int64_t,
                                const NhwcEpilogue& e) {
      walk_interior<S, SW, kFull>(s, v, w, 0, m, e);
    }
  };
};

template <int OW, int S, int SW, int PL, int PR>
struct ShortRow {
  template <bool kFull>
  struct Fn {
    DNNX_AVX512 static void run(const DepthwiseStrip& s, const WalkVector& v, const float* w, int64_t a, int64_t b,
                                const NhwcEpilogue& e) {
      walk_short_row<OW, S, SW, PL, PR, kFull>(s, v, w, a, b, e);
    }
  };
};

// One strip of P pixels at `first` over every vector of channels [c0, c0 + n) (the last one
// masked where n % 16 != 0).
template <int P, int S, int SW, int PL, int PR>
DNNX_AVX512 void strip_vectors(const DepthwiseStrip& s, int64_t c0, int64_t n, const float* w, int64_t first, float* y,
                               const NhwcEpilogue& e) {
  for (int64_t k = 0; k < n; k += 16) {
    const float* bias = e.bias ? e.bias + k : nullptr;
    const float* residual = e.residual ? e.residual + k : nullptr;
    if (n - k >= 16) {
      walk_strip<P, S, SW, PL, PR, true>(s, c0 + k, 0xFFFF, w, first, y + k, bias, residual, e);
    } else {
      const __mmask16 mask = static_cast<__mmask16>((1u << (n - k)) - 1);
      walk_strip<P, S, SW, PL, PR, false>(s, c0 + k, mask, w, first, y + k, bias, residual, e);
    }
  }
}

// A whole row of ow >= 16 pixels from column -PL, strip by strip, each strip over every vector
// of the channel block (Note [depthwise row walk]): a left strip of 8 with PL padded columns, the
// interior in strips of 16 (8, 4, 2, 1 for the rest), a right strip of 8 whose last `pr` columns
// (0 to 3) are past X.
template <int S, int SW, int PL>
DNNX_AVX512 void walk_row(const DepthwiseStrip& s, int64_t c0, int64_t n, const float* w, float* y, int64_t ow,
                          int64_t pr, const NhwcEpilogue& e) {
  strip_vectors<8, S, SW, PL, 0>(s, c0, n, w, 0, y, e);
  int64_t first = 8;
  const int64_t end = ow - 8;
  for (; first + 16 <= end; first += 16) strip_vectors<16, S, SW, 0, 0>(s, c0, n, w, first, y, e);
  if (first + 8 <= end) strip_vectors<8, S, SW, 0, 0>(s, c0, n, w, first, y, e), first += 8;
  if (first + 4 <= end) strip_vectors<4, S, SW, 0, 0>(s, c0, n, w, first, y, e), first += 4;
  if (first + 2 <= end) strip_vectors<2, S, SW, 0, 0>(s, c0, n, w, first, y, e), first += 2;
  if (first < end) strip_vectors<1, S, SW, 0, 0>(s, c0, n, w, first, y, e);
  switch (pr) {
    case 0: return strip_vectors<8, S, SW, 0, 0>(s, c0, n, w, end, y, e);
    case 1: return strip_vectors<8, S, SW, 0, 1>(s, c0, n, w, end, y, e);
    case 2: return strip_vectors<8, S, SW, 0, 2>(s, c0, n, w, end, y, e);
    default: return strip_vectors<8, S, SW, 0, 3>(s, c0, n, w, end, y, e);
  }
}

template <int S, int SW>
DNNX_AVX512 bool row_of(const DepthwiseStrip& s, int64_t c0, int64_t n, const float* w, float* y, int64_t ow,
                        int64_t pl, int64_t pr, const NhwcEpilogue& e) {
  switch (pl) {
    case 0: walk_row<S, SW, 0>(s, c0, n, w, y, ow, pr, e); return true;
    case 1: walk_row<S, SW, 1>(s, c0, n, w, y, ow, pr, e); return true;
    case 2: walk_row<S, SW, 2>(s, c0, n, w, y, ow, pr, e); return true;
    case 3: walk_row<S, SW, 3>(s, c0, n, w, y, ow, pr, e); return true;
    default: return false;
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
    case 31: each_vector<Interior<3, 1>::Fn>(s, c0, n, w, y, m, 0, e); return true;
    case 32: each_vector<Interior<3, 2>::Fn>(s, c0, n, w, y, m, 0, e); return true;
    case 51: each_vector<Interior<5, 1>::Fn>(s, c0, n, w, y, m, 0, e); return true;
    case 52: each_vector<Interior<5, 2>::Fn>(s, c0, n, w, y, m, 0, e); return true;
    case 71: each_vector<Interior<7, 1>::Fn>(s, c0, n, w, y, m, 0, e); return true;
    default: return false;
  }
#else
  return false;
#endif
}

bool nhwc_depthwise_row_walk(const DepthwiseStrip& row, int64_t c0, int64_t n, const float* w, float* y, int64_t ow,
                             int64_t width, int64_t pad, const NhwcEpilogue& e) {
#ifdef DNNX_WALK_AVX512
  if (!nhwc_tiles_have_avx512() || row.dw != 1) return false;
  DepthwiseStrip s = row;  // pixel 0's first tap at column -pad, every tap of the window
  s.iw0 = -pad, s.kw_lo = 0, s.kw_hi = s.window_cols;
  const int64_t k = s.window_cols, st = s.sw;
  // the columns past X's last one that the last pixel's window reads
  const int64_t pr = std::max<int64_t>(0, (ow - 1) * st - pad + k - width);
  const auto is = [&](int64_t o, int64_t wi, int64_t kk, int64_t sst, int64_t p) {
    return ow == o && width == wi && k == kk && st == sst && pad == p;
  };
  if (is(7, 7, 3, 1, 1)) return each_vector<ShortRow<7, 3, 1, 1, 1>::Fn>(s, c0, n, w, y, 0, 0, e), true;
  if (is(7, 7, 5, 1, 2)) return each_vector<ShortRow<7, 5, 1, 2, 2>::Fn>(s, c0, n, w, y, 0, 0, e), true;
  if (is(14, 14, 3, 1, 1)) return each_vector<ShortRow<14, 3, 1, 1, 1>::Fn>(s, c0, n, w, y, 0, 0, e), true;
  if (is(14, 14, 5, 1, 2)) return each_vector<ShortRow<14, 5, 1, 2, 2>::Fn>(s, c0, n, w, y, 0, 0, e), true;
  if (is(7, 14, 3, 2, 1)) return each_vector<ShortRow<7, 3, 2, 1, 0>::Fn>(s, c0, n, w, y, 0, 0, e), true;
  if (is(7, 14, 5, 2, 2)) return each_vector<ShortRow<7, 5, 2, 2, 1>::Fn>(s, c0, n, w, y, 0, 0, e), true;
  // Longer rows: edge strips of 8 and the interior between them, where their padding fits the
  // edge strips (at most 3 columns a side, fewer than the window's).
  if (ow < 16 || pad < 0 || pad >= k || pad > 3 || pr >= k || pr > 3) return false;
  switch (k * 10 + st) {
    case 31: return row_of<3, 1>(s, c0, n, w, y, ow, pad, pr, e);
    case 32: return row_of<3, 2>(s, c0, n, w, y, ow, pad, pr, e);
    case 51: return row_of<5, 1>(s, c0, n, w, y, ow, pad, pr, e);
    case 52: return row_of<5, 2>(s, c0, n, w, y, ow, pad, pr, e);
    case 71: return row_of<7, 1>(s, c0, n, w, y, ow, pad, pr, e);
    default: return false;
  }
#else
  return false;
#endif
}

}  // namespace dnnx
