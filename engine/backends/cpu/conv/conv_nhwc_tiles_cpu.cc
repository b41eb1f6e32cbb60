// The channels-last conv tiles (conv_nhwc_tiles_cpu.h): AVX-512 kernels per tile shape, AVX2 ones
// (conv_nhwc_tiles_avx2_cpu.cc) for a CPU without AVX-512, and portable loops of the same products
// and sums for a CPU with neither (Note [tile paths]).
#include "backends/cpu/conv/conv_nhwc_tiles_cpu.h"

#include "backends/cpu/conv/conv_nhwc_depthwise_walk_cpu.h"
#include "backends/cpu/conv/conv_nhwc_tiles_avx2_cpu.h"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DNNX_NHWC_AVX512 1
// GCC 12 warns that _mm512_max_ps's unused pass-through operand "may be used uninitialized"
// (inside immintrin.h, once inlined): a false positive.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace dnnx {

namespace {

// A panel's channel block: at most this many floats (128 KiB), so it stays in L2 while the
// strips of an item pass over it.
constexpr int64_t kPanelBlockFloats = 32768;

// Note [filter prefetch]: the dense tile reads its panel as one forward stream (16 V floats per
// channel, Note [packed nhwc filter]), from memory for an item's first strip and from L2 for the
// others, and the hardware prefetchers alone kept it at half the rate onnxruntime's kernels
// read theirs: Faster R-CNN's fc6, [3 x 12544] x [12544 x 1024] as a packed product, streamed
// its 51 MB filter at 10-11 GB/s against onnxruntime's 18-20. So the tile asks for the cache line
// 4 KiB ahead of the one it loads, into L1, once per line: that product 4.6 -> 3.1 ms, and on the
// convs, whose panels come from L2, ResNet-50d 0.93x, MobileNetV2 0.94x, EfficientNet-B0 0.82x
// of their time without it (1 thread, this 2-core AVX-512 Xeon; 1 KiB ahead gained less, 8 KiB
// the same, a second prefetch into L2 16 KiB ahead nothing more). A prefetch changes no result;
// one past the end of the packed filter is harmless (it never faults).
constexpr int64_t kFilterPrefetchFloats = 1024;

// Where the tile's stores end: the epilogue, then the store (accumulated or not).
inline float finish(float s, const float* dst, bool accumulate, bool last, const float* bias, const float* residual,
                    const NhwcEpilogue& e) {
  if (accumulate) s = *dst + s;
  if (last) {
    if (bias) s = s + *bias;
    if (residual) s = s + *residual;
    s = clamped(s, e);
  }
  return s;
}

// (`table`: the pixels of a strip's pointer table, P or more: Note [tail strips])
template <int P, int V>
void dense_portable(const float* const* rows, int64_t table, int64_t taps, int64_t c0, int64_t cn, const float* w,
                    float* y, int64_t ldc, int64_t m, int64_t n, bool accumulate, bool last, const NhwcEpilogue& e) {
  constexpr int NR = 16 * V;
  for (int64_t first = 0; first < m; first += P, rows += taps * table) {  // the strips, one after the other
    float acc[P][NR] = {};
    for (int64_t t = 0; t < taps; ++t) {
      const float* const* x = rows + t * table;
      const float* wt = w + t * cn * NR;
      for (int64_t c = 0; c < cn; ++c) {
        for (int p = 0; p < P; ++p) {
          const float b = x[p][c0 + c];
          for (int j = 0; j < NR; ++j) acc[p][j] += b * wt[c * NR + j];
        }
      }
    }
    for (int64_t p = 0; p < std::min<int64_t>(P, m - first); ++p) {
      for (int64_t j = 0; j < n; ++j) {
        float* dst = y + (first + p) * ldc + j;
        *dst = finish(acc[p][j], dst, accumulate, last, e.bias ? e.bias + j : nullptr,
                      e.residual ? e.residual + (first + p) * ldc + j : nullptr, e);
      }
    }
  }
}

void depthwise_portable(const DepthwiseStrip& s, int64_t c0, int64_t n, const float* w, float* y, int64_t m,
                        const NhwcEpilogue& e) {
  for (int64_t p = 0; p < m; ++p) {
    float acc[kDepthwiseChannels] = {};
    for (int64_t kh = 0; kh < s.window_rows; ++kh) {
      if (!s.rows[kh]) continue;
      for (int64_t kw = s.kw_lo; kw < s.kw_hi; ++kw) {
        const float* x = s.rows[kh] + (s.iw0 + p * s.sw + kw * s.dw) * s.channels + c0;
        const float* wt = w + (kh * s.window_cols + kw) * s.channels + c0;
        for (int64_t c = 0; c < n; ++c) acc[c] += x[c] * wt[c];
      }
    }
    for (int64_t c = 0; c < n; ++c) {
      float* dst = y + p * s.channels + c;
      *dst = finish(acc[c], dst, false, true, e.bias ? e.bias + c : nullptr,
                    e.residual ? e.residual + p * s.channels + c : nullptr, e);
    }
  }
}

#ifdef DNNX_NHWC_AVX512
#define DNNX_AVX512 __attribute__((target("avx512f")))

DNNX_AVX512 inline __mmask16 lanes(int64_t valid) {
  return valid >= 16 ? static_cast<__mmask16>(0xFFFF) : valid <= 0 ? 0 : static_cast<__mmask16>((1u << valid) - 1);
}

// acc (one vector of one pixel's outputs) through the epilogue and into dst's `mask` lanes.
DNNX_AVX512 inline void store_lanes(__m512 s, float* dst, __mmask16 mask, bool accumulate, bool last,
                                    const float* bias, const float* residual, const NhwcEpilogue& e) {
  if (accumulate) s = _mm512_add_ps(_mm512_maskz_loadu_ps(mask, dst), s);
  if (last) {
    if (bias) s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(mask, bias));
    if (residual) s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(mask, residual));
    if (e.clamp) {  // max and min return their second operand for a NaN: it passes through
      s = _mm512_max_ps(_mm512_set1_ps(e.lo), s);
      s = _mm512_min_ps(_mm512_set1_ps(e.hi), s);
    }
  }
  _mm512_mask_storeu_ps(dst, mask, s);
}

template <int P, int V>
DNNX_AVX512 void dense_avx512(const float* const* rows, int64_t table, int64_t taps, int64_t c0, int64_t cn,
                              const float* w, float* y, int64_t ldc, int64_t m, int64_t n, bool accumulate, bool last,
                              const NhwcEpilogue& e) {
  constexpr int NR = 16 * V;
  __mmask16 mask[V];
  for (int v = 0; v < V; ++v) mask[v] = lanes(n - 16 * v);
  for (int64_t first = 0; first < m; first += P, rows += taps * table) {  // the strips, one after the other
    __m512 acc[P][V];
    for (int p = 0; p < P; ++p)
      for (int v = 0; v < V; ++v) acc[p][v] = _mm512_setzero_ps();
    for (int64_t t = 0; t < taps; ++t) {
      const float* x[P];
      for (int p = 0; p < P; ++p) x[p] = rows[t * table + p] + c0;
      const float* wc = w + t * cn * NR;
      for (int64_t c = 0; c < cn; ++c, wc += NR) {
        __m512 wv[V];
        for (int v = 0; v < V; ++v) wv[v] = _mm512_loadu_ps(wc + 16 * v);
        for (int v = 0; v < V; ++v)  // Note [filter prefetch]: a row of V vectors is V cache lines
          _mm_prefetch(reinterpret_cast<const char*>(wc + kFilterPrefetchFloats + 16 * v), _MM_HINT_T0);
        for (int p = 0; p < P; ++p) {
          const __m512 b = _mm512_set1_ps(x[p][c]);
          for (int v = 0; v < V; ++v) acc[p][v] = _mm512_fmadd_ps(b, wv[v], acc[p][v]);
        }
      }
    }
    const int64_t count = std::min<int64_t>(P, m - first);
    float* ys = y + first * ldc;
    const float* zs = e.residual ? e.residual + first * ldc : nullptr;
    for (int p = 0; p < P; ++p) {
      if (p >= count) break;
      for (int v = 0; v < V; ++v) {
        if (!mask[v]) break;
        store_lanes(acc[p][v], ys + p * ldc + 16 * v, mask[v], accumulate, last, e.bias ? e.bias + 16 * v : nullptr,
                    zs ? zs + p * ldc + 16 * v : nullptr, e);
      }
    }
  }
}

// One strip of exactly P pixels x V vectors of 16 channels; kFull: all 16 V channels valid
// (plain loads), else the last vector masked.
//
// Note [depthwise strips]: a strip's pixel count is a template argument, the last strip of a
// call one of its own (as Note [tail strips]): the loops over pixels had a `p >= count` exit,
// and GCC kept the accumulators in a stack array as well, flagged which ones a tap had touched,
// and stored them through it (24 spills and reloads a strip at 6 x 4). Each pixel's sum is the
// same: the same bits. 1 thread, one conv a model, kernel ms: 32 channels 3x3 at 112x112
// 0.179 -> 0.170, 96 at 112x112 stride 2 0.202 -> 0.172, 1152 5x5 at 7x7 0.068 -> 0.058.
template <int P, int V, bool kFull>
DNNX_AVX512 inline void depthwise_strip_avx512(const DepthwiseStrip& s, int64_t c0, const __mmask16* mask,
                                               const float* w, int64_t first, float* y, const NhwcEpilogue& e) {
  const int64_t step = s.sw * s.channels;
  __m512 acc[P][V];
  for (int p = 0; p < P; ++p)
    for (int v = 0; v < V; ++v) acc[p][v] = _mm512_setzero_ps();
  for (int64_t kh = 0; kh < s.window_rows; ++kh) {
    if (!s.rows[kh]) continue;
    const float* xrow = s.rows[kh] + (s.iw0 + first * s.sw) * s.channels + c0;
    const float* wrow = w + kh * s.window_cols * s.channels + c0;
    for (int64_t kw = s.kw_lo; kw < s.kw_hi; ++kw) {
      const float* wt = wrow + kw * s.channels;
      const float* x = xrow + kw * s.dw * s.channels;
      __m512 wv[V];
      for (int v = 0; v < V; ++v) wv[v] = kFull ? _mm512_loadu_ps(wt + 16 * v) : _mm512_maskz_loadu_ps(mask[v], wt + 16 * v);
      for (int p = 0; p < P; ++p) {
        for (int v = 0; v < V; ++v) {
          const float* xp = x + p * step + 16 * v;
          const __m512 xv = kFull ? _mm512_loadu_ps(xp) : _mm512_maskz_loadu_ps(mask[v], xp);
          acc[p][v] = _mm512_fmadd_ps(xv, wv[v], acc[p][v]);
        }
      }
    }
  }
  float* yf = y + first * s.channels;
  const float* zf = e.residual ? e.residual + first * s.channels : nullptr;
  for (int p = 0; p < P; ++p) {
    for (int v = 0; v < V; ++v) {
      store_lanes(acc[p][v], yf + p * s.channels + 16 * v, mask[v], false, true, e.bias ? e.bias + 16 * v : nullptr,
                  zf ? zf + p * s.channels + 16 * v : nullptr, e);
    }
  }
}

// m pixels: strips of P, then the rest on a strip of that many (each pixel's sum the same).
template <int P, int V, bool kFull>
DNNX_AVX512 void depthwise_avx512(const DepthwiseStrip& s, int64_t c0, int64_t n, const float* w, float* y, int64_t m,
                                  const NhwcEpilogue& e) {
  __mmask16 mask[V];
  for (int v = 0; v < V; ++v) mask[v] = lanes(n - 16 * v);
  int64_t first = 0;
  for (; first + P <= m; first += P) depthwise_strip_avx512<P, V, kFull>(s, c0, mask, w, first, y, e);
  switch (m - first) {
    case 0: return;
    case 1: return depthwise_strip_avx512<1, V, kFull>(s, c0, mask, w, first, y, e);
    case 2: return depthwise_strip_avx512<2, V, kFull>(s, c0, mask, w, first, y, e);
    case 3: return depthwise_strip_avx512<3, V, kFull>(s, c0, mask, w, first, y, e);
    case 4: return depthwise_strip_avx512<4, V, kFull>(s, c0, mask, w, first, y, e);
    case 5: return depthwise_strip_avx512<5, V, kFull>(s, c0, mask, w, first, y, e);
    case 6: return depthwise_strip_avx512<(P > 6 ? 6 : 1), V, kFull>(s, c0, mask, w, first, y, e);
    default: return depthwise_strip_avx512<(P > 7 ? 7 : 1), V, kFull>(s, c0, mask, w, first, y, e);
  }
}

DNNX_AVX512 void gather_run_avx512(const float* in, float* out, int64_t lead, int64_t n, int64_t total) {
  const int64_t end = lead + n;
  for (int64_t i = 0; i < total; i += 16) {
    // lanes [i, i + 16) of out: those in [lead, end) read in[lane - lead], the others are 0
    const int64_t from = std::max<int64_t>(i, lead), to = std::min<int64_t>(i + 16, end);
    const __mmask16 read = from < to ? static_cast<__mmask16>(lanes(to - i) & ~lanes(from - i)) : 0;
    const __m512 v = _mm512_maskz_loadu_ps(read, in + (i - lead));
    _mm512_mask_storeu_ps(out + i, lanes(total - i), v);
  }
}

// Whole 16-float chunks, then one masked tail (its mask once per call, not per window row).
DNNX_AVX512 void gather_window_avx512(const float* const* in, int64_t window_rows, int64_t run, int64_t step,
                                      int64_t count, float* out, int64_t out_stride) {
  const int64_t full = run / 16 * 16;
  const __mmask16 tail = lanes(run - full);
  for (int64_t p = 0; p < count; ++p, out += out_stride) {
    for (int64_t i = 0; i < window_rows; ++i) {
      const float* from = in[i] + p * step;
      float* to = out + i * run;
      for (int64_t f = 0; f < full; f += 16) _mm512_storeu_ps(to + f, _mm512_loadu_ps(from + f));
      if (tail) _mm512_mask_storeu_ps(to + full, tail, _mm512_maskz_loadu_ps(tail, from + full));
    }
  }
}

template <int P, int V>
DNNX_AVX512 void depthwise_avx512_any(const DepthwiseStrip& s, int64_t c0, int64_t n, const float* w, float* y,
                                      int64_t m, const NhwcEpilogue& e) {
  n == 16 * V ? depthwise_avx512<P, V, true>(s, c0, n, w, y, m, e) : depthwise_avx512<P, V, false>(s, c0, n, w, y, m, e);
}
#endif

using DenseFn = void (*)(const float* const*, int64_t, int64_t, int64_t, int64_t, const float*, float*, int64_t,
                         int64_t, int64_t, bool, bool, const NhwcEpilogue&);

template <int P, int V>
DenseFn dense_fn_of() {
  if (nhwc_tiles_have_avx2()) return nhwc_dense_avx2_fn(P);  // V = 1 there (nhwc_tile_shape)
#ifdef DNNX_NHWC_AVX512
  if (nhwc_tiles_have_avx512()) return dense_avx512<P, V>;
#endif
  return dense_portable<P, V>;
}

// The tile of V vectors and P pixels (Note [short strips]: fewer than the default P only where
// the conv or product has fewer output pixels; V = 4 holds at most 6).
template <int V>
DenseFn dense_fn_v(int pixels) {
  switch (pixels) {
    case 1: return dense_fn_of<1, V>();
    case 2: return dense_fn_of<2, V>();
    case 3: return dense_fn_of<3, V>();
    case 4: return dense_fn_of<4, V>();
    case 5: return dense_fn_of<5, V>();
    case 6: return dense_fn_of<6, V>();
    case 7: return dense_fn_of<V == 4 ? 6 : 7, V>();
    default: return dense_fn_of<V == 4 ? 6 : 8, V>();
  }
}

DenseFn dense_fn(int vectors, int pixels) {
  switch (vectors) {
    case 1: return dense_fn_v<1>(pixels);
    case 2: return dense_fn_v<2>(pixels);
    case 3: return dense_fn_v<3>(pixels);
    default: return dense_fn_v<4>(pixels);
  }
}

}  // namespace

namespace {

// Note [tile paths]: the tiles' instruction set, chosen once per process: AVX-512 where the CPU
// has it, else AVX2 with FMA (Note [avx2 tiles]), else the portable loops. DNNX_CONV_NHWC=avx2
// takes the AVX2 tiles on an AVX-512 CPU and DNNX_CONV_NHWC=portable the portable loops on any,
// so one machine's tests can cover every path.
enum class TilePath { Portable, Avx2, Avx512 };

TilePath tile_path() {
  static const TilePath path = [] {
    const char* env = std::getenv("DNNX_CONV_NHWC");
    const std::string mode = env ? env : "";
    if (mode == "portable") return TilePath::Portable;
#ifdef DNNX_NHWC_AVX512
    if (mode != "avx2" && __builtin_cpu_supports("avx512f")) return TilePath::Avx512;
#endif
    return nhwc_cpu_has_avx2() ? TilePath::Avx2 : TilePath::Portable;
  }();
  return path;
}

}  // namespace

bool nhwc_tiles_have_avx512() { return tile_path() == TilePath::Avx512; }
bool nhwc_tiles_have_avx2() { return tile_path() == TilePath::Avx2; }
bool nhwc_tiles_vectorized() { return tile_path() != TilePath::Portable; }

std::string nhwc_tile_path() {
  switch (tile_path()) {
    case TilePath::Avx512: return "avx512";
    case TilePath::Avx2: return "avx2";
    default: return "portable";
  }
}

NhwcTileShape nhwc_tile_shape(int64_t filters, int64_t channels, int64_t taps, int64_t rows) {
  NhwcTileShape s;
  s.filters = filters;
  s.channels = channels;
  s.taps = std::max<int64_t>(1, taps);
  int64_t best = -1;
  for (int v = 4; v >= 1; --v) {
    const int64_t width = 16 * v, padded = (filters + width - 1) / width * width;
    if (best < 0 || padded < best) {
      best = padded;
      s.vectors = v;
    }
  }
  s.pixels = s.vectors == 4 ? 6 : 8;
  if (nhwc_tiles_have_avx2()) s.vectors = 1, s.pixels = 6;  // Note [avx2 tiles]: 6 x 16, 15 of 16 registers
  if (rows <= s.pixels / 2) s.pixels = static_cast<int>(std::max<int64_t>(1, rows));  // Note [short strips]
  // Blocks of equal size (the last one at most one smaller), each within kPanelBlockFloats.
  const int64_t most = std::max<int64_t>(1, kPanelBlockFloats / (s.taps * s.panel_width()));
  const int64_t blocks = std::max<int64_t>(1, (channels + most - 1) / most);
  s.block = std::max<int64_t>(1, (channels + blocks - 1) / blocks);
  return s;
}

void pack_nhwc_filter(const NhwcTileShape& s, const float* w, float* packed) {
  const int64_t nr = s.panel_width();
  std::fill(packed, packed + s.packed_size(), 0.0f);
  for (int64_t b = 0; b < s.blocks(); ++b) {
    const int64_t cn = s.block_channels(b);
    for (int64_t j = 0; j < s.panels(); ++j) {
      float* out = packed + s.panel_offset(b, j);
      for (int64_t t = 0; t < s.taps; ++t) {
        for (int64_t c = 0; c < cn; ++c) {
          for (int64_t i = 0; i < nr; ++i) {
            const int64_t k = j * nr + i;
            if (k < s.filters) out[(t * cn + c) * nr + i] = w[(k * s.taps + t) * s.channels + b * s.block + c];
          }
        }
      }
    }
  }
}

void nhwc_dense_tile(const NhwcTileShape& s, const float* const* rows, int64_t c0, int64_t cn, const float* w,
                     float* y, int64_t ldc, int64_t m, int64_t n, bool accumulate, bool last, const NhwcEpilogue& e) {
  const int64_t full = m / s.pixels * s.pixels, rest = m - full;
  if (full > 0) dense_fn(s.vectors, s.pixels)(rows, s.pixels, s.taps, c0, cn, w, y, ldc, full, n, accumulate, last, e);
  if (rest == 0) return;
  // Note [tail strips]: the last strip's pixels on a tile of that many, its table as it is
  NhwcEpilogue tail = e;
  if (tail.residual) tail.residual += full * ldc;
  dense_fn(s.vectors, static_cast<int>(rest))(rows + full / s.pixels * s.taps * s.pixels, s.pixels, s.taps, c0, cn, w,
                                               y + full * ldc, ldc, rest, n, accumulate, last, tail);
}

void nhwc_gather_run(const float* in, float* out, int64_t lead, int64_t n, int64_t total) {
#ifdef DNNX_NHWC_AVX512
  if (nhwc_tiles_have_avx512()) return gather_run_avx512(in, out, lead, n, total);
#endif
  for (int64_t i = 0; i < total; ++i) out[i] = i >= lead && i < lead + n ? in[i - lead] : 0.0f;
}

void nhwc_gather_window(const float* const* in, int64_t window_rows, int64_t run, int64_t step, int64_t count,
                        float* out, int64_t out_stride) {
#ifdef DNNX_NHWC_AVX512
  if (nhwc_tiles_have_avx512()) return gather_window_avx512(in, window_rows, run, step, count, out, out_stride);
#endif
  for (int64_t p = 0; p < count; ++p)
    for (int64_t i = 0; i < window_rows; ++i)
      std::copy(in[i] + p * step, in[i] + p * step + run, out + p * out_stride + i * run);
}

void nhwc_depthwise_strip(const DepthwiseStrip& s, int64_t c0, int64_t n, const float* w, float* y, int64_t m,
                          const NhwcEpilogue& e) {
  if (nhwc_depthwise_walk(s, c0, n, w, y, m, e)) return;  // Note [depthwise column walk]
  if (nhwc_tiles_have_avx2()) return nhwc_depthwise_avx2(s, c0, n, w, y, m, e);
#ifdef DNNX_NHWC_AVX512
  if (nhwc_tiles_have_avx512()) {
    if (n > 48) return depthwise_avx512_any<6, 4>(s, c0, n, w, y, m, e);
    if (n > 32) return depthwise_avx512_any<8, 3>(s, c0, n, w, y, m, e);
    if (n > 16) return depthwise_avx512_any<8, 2>(s, c0, n, w, y, m, e);
    return depthwise_avx512_any<8, 1>(s, c0, n, w, y, m, e);
  }
#endif
  depthwise_portable(s, c0, n, w, y, m, e);
}

}  // namespace dnnx
