// Note [avx2 tiles]: the channels-last tiles (conv_nhwc_tiles_cpu.h) for a CPU with AVX2 and FMA
// but no AVX-512 (this session's 2-core EPYC, and CI's). Without them such a CPU ran every conv
// through im2col and OpenBLAS (bench/RESULTS.md: the median model 1.14x onnxruntime's time at one
// thread, MobileNetV2 1.67x), and the portable loops compiled for AVX2 lost to that (2.69x on
// EfficientNet-B0): the fast form needs its register tiles written for 8 lanes and 16 registers.
// - The dense tile: 6 pixels x 16 filters (a panel of V = 1, nhwc_tile_shape), 12 accumulators,
//   the channel's two filter vectors and one broadcast: 15 of the 16 ymm registers. Per tap and
//   channel, 2 filter loads and 6 broadcasts feed 12 FMAs (MLAS's FMA3 SGEMM kernel has the
//   same 6 x 16 shape).
// - The depthwise strip: 6 pixels x 16 channels at a time (12 accumulators, 2 filter vectors; the
//   input vectors are the FMAs' memory operands), over a call's 64-channel block 16 at a time.
// Each output is the same sum in the same order as on the AVX-512 tiles and the portable loops:
// over taps, then channels, an FMA into one accumulator from 0, then the epilogue in the unfused
// ops' order; so results do not depend on the thread count here either.
#include "backends/cpu/conv/conv_nhwc_tiles_avx2_cpu.h"

#include <algorithm>

#include "backends/cpu/runtime/avx2_lanes.h"
#include "backends/cpu/runtime/cpu_features.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define DNNX_NHWC_AVX2 1
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // as in conv_nhwc_tiles_cpu.cc
#endif

namespace dnnx {

#ifdef DNNX_NHWC_AVX2
namespace {

#define DNNX_AVX2 DNNX_TARGET_AVX2

// Note [filter prefetch] (conv_nhwc_tiles_cpu.cc): the cache line 4 KiB ahead, once per line
// (a panel row of 16 floats is one line).
constexpr int64_t kFilterPrefetchFloats = 1024;

// s (8 of one pixel's outputs) through the epilogue into dst: ((sum + bias) + residual), then the
// clamp (max, min: NaN passes through, as Relu and Clip let it).
DNNX_AVX2 inline void finish8(__m256 s, float* dst, __m256i mask, bool full, bool accumulate, bool last,
                             const float* bias, const float* residual, const NhwcEpilogue& e) {
  if (accumulate) s = _mm256_add_ps(load8(dst, mask, full), s);
  if (last) {
    if (bias) s = _mm256_add_ps(s, load8(bias, mask, full));
    if (residual) s = _mm256_add_ps(s, load8(residual, mask, full));
    if (e.clamp) {
      s = _mm256_max_ps(_mm256_set1_ps(e.lo), s);
      s = _mm256_min_ps(_mm256_set1_ps(e.hi), s);
    }
  }
  store8(dst, s, mask, full);
}

// nhwc_dense_tile's loop for a panel of 16 filters and strips of P pixels (P <= 6); m is a
// multiple of P (Note [tail strips]). Note [accumulators in registers]: where the stores' loop over
// the pixels was not unrolled (a `p >= count` exit, or just its size), GCC kept the accumulators
// in a stack array as well and stored them after every FMA: 1x1 256 -> 256 at 14x14 took 0.97 ms,
// against OpenBLAS's 0.47. So the stores' loops are unrolled by pragma.
template <int P>
DNNX_AVX2 void dense_avx2(const float* const* rows, int64_t table, int64_t taps, int64_t c0, int64_t cn,
                          const float* w, float* y, int64_t ldc, int64_t m, int64_t n, bool accumulate, bool last,
                          const NhwcEpilogue& e) {
  constexpr int NR = 16;
  const __m256i mask0 = lanes8(n), mask1 = lanes8(n - 8);
  const bool full0 = n >= 8, full1 = n >= 16;
  for (int64_t first = 0; first < m; first += P, rows += taps * table) {  // the strips, one after the other
    __m256 acc[P][2];
    for (int p = 0; p < P; ++p) acc[p][0] = acc[p][1] = _mm256_setzero_ps();
    for (int64_t t = 0; t < taps; ++t) {
      const float* x[P];
      for (int p = 0; p < P; ++p) x[p] = rows[t * table + p] + c0;
      const float* wc = w + t * cn * NR;
      for (int64_t c = 0; c < cn; ++c, wc += NR) {
        const __m256 w0 = _mm256_loadu_ps(wc), w1 = _mm256_loadu_ps(wc + 8);
        _mm_prefetch(reinterpret_cast<const char*>(wc + kFilterPrefetchFloats), _MM_HINT_T0);
        for (int p = 0; p < P; ++p) {
          const __m256 b = _mm256_broadcast_ss(x[p] + c);
          acc[p][0] = _mm256_fmadd_ps(b, w0, acc[p][0]);
          acc[p][1] = _mm256_fmadd_ps(b, w1, acc[p][1]);
        }
      }
    }
    float* ys = y + first * ldc;
    const float* zs = e.residual ? e.residual + first * ldc : nullptr;
#pragma GCC unroll 6
    for (int p = 0; p < P; ++p) {  // m is a multiple of P (nhwc_dense_tile), so no pixel exit
      float* dst = ys + p * ldc;
      const float* z = zs ? zs + p * ldc : nullptr;
      finish8(acc[p][0], dst, mask0, full0, accumulate, last, e.bias, z, e);
      if (n > 8) {
        finish8(acc[p][1], dst + 8, mask1, full1, accumulate, last, e.bias ? e.bias + 8 : nullptr, z ? z + 8 : nullptr,
               e);
      }
    }
  }
}

// P pixels (from `first`) x the 16 channels [c0, c0 + 16) of a depthwise strip, of which the masks'
// lanes are valid (kFull: all 16).
template <int P, bool kFull>
DNNX_AVX2 inline void depthwise_chunk_avx2(const DepthwiseStrip& s, int64_t c0, __m256i mask0, __m256i mask1,
                                           const float* w, int64_t first, float* y, const NhwcEpilogue& e) {
  const int64_t step = s.sw * s.channels;
  __m256 acc[P][2];
  for (int p = 0; p < P; ++p) acc[p][0] = acc[p][1] = _mm256_setzero_ps();
  for (int64_t kh = 0; kh < s.window_rows; ++kh) {
    if (!s.rows[kh]) continue;
    const float* xrow = s.rows[kh] + (s.iw0 + first * s.sw) * s.channels + c0;
    const float* wrow = w + kh * s.window_cols * s.channels + c0;
    for (int64_t kw = s.kw_lo; kw < s.kw_hi; ++kw) {
      const float* wt = wrow + kw * s.channels;
      const float* x = xrow + kw * s.dw * s.channels;
      const __m256 w0 = load8(wt, mask0, kFull), w1 = load8(wt + 8, mask1, kFull);
      for (int p = 0; p < P; ++p) {
        const float* xp = x + p * step;
        acc[p][0] = _mm256_fmadd_ps(load8(xp, mask0, kFull), w0, acc[p][0]);
        acc[p][1] = _mm256_fmadd_ps(load8(xp + 8, mask1, kFull), w1, acc[p][1]);
      }
    }
  }
  float* yf = y + first * s.channels;
  const float* zf = e.residual ? e.residual + first * s.channels : nullptr;
#pragma GCC unroll 6
  for (int p = 0; p < P; ++p) {
    float* dst = yf + p * s.channels;
    const float* z = zf ? zf + p * s.channels : nullptr;
    finish8(acc[p][0], dst, mask0, kFull, false, true, e.bias, z, e);
    finish8(acc[p][1], dst + 8, mask1, kFull, false, true, e.bias ? e.bias + 8 : nullptr, z ? z + 8 : nullptr, e);
  }
}

// A strip of P pixels (from `first`) over the n channels [c0, c0 + n) (n <= 64), 16 at a time:
// a pixel's channel block is adjacent cache lines, read while they are in L1 (chunk after chunk
// over a whole row of pixels reread each line from L2: 96 channels 3x3 at 112x112 took 3.7 ms).
template <int P>
DNNX_AVX2 void depthwise_strip_avx2(const DepthwiseStrip& s, int64_t c0, int64_t n, const float* w, float* y,
                                    int64_t first, const NhwcEpilogue& e) {
  for (int64_t c = 0; c < n; c += 16) {  // a chunk's outputs are its channels' own sums
    NhwcEpilogue chunk = e;
    if (chunk.bias) chunk.bias += c;
    if (chunk.residual) chunk.residual += c;
    const int64_t valid = std::min<int64_t>(16, n - c);
    if (valid == 16) {
      depthwise_chunk_avx2<P, true>(s, c0 + c, lanes8(8), lanes8(8), w, first, y + c, chunk);
    } else {
      depthwise_chunk_avx2<P, false>(s, c0 + c, lanes8(valid), lanes8(valid - 8), w, first, y + c, chunk);
    }
  }
}

}  // namespace

bool nhwc_cpu_has_avx2() { return cpu_has_avx2_fma(); }

AvxDenseFn nhwc_dense_avx2_fn(int pixels) {
  switch (pixels) {
    case 1: return dense_avx2<1>;
    case 2: return dense_avx2<2>;
    case 3: return dense_avx2<3>;
    case 4: return dense_avx2<4>;
    case 5: return dense_avx2<5>;
    default: return dense_avx2<6>;
  }
}

void nhwc_depthwise_avx2(const DepthwiseStrip& s, int64_t c0, int64_t n, const float* w, float* y, int64_t m,
                         const NhwcEpilogue& e) {
  // strips of 6 pixels, then the rest on a strip of that many (each pixel's sum the same: Note
  // [tail strips])
  int64_t first = 0;
  for (; first + 6 <= m; first += 6) depthwise_strip_avx2<6>(s, c0, n, w, y, first, e);
  switch (m - first) {
    case 0: return;
    case 1: return depthwise_strip_avx2<1>(s, c0, n, w, y, first, e);
    case 2: return depthwise_strip_avx2<2>(s, c0, n, w, y, first, e);
    case 3: return depthwise_strip_avx2<3>(s, c0, n, w, y, first, e);
    case 4: return depthwise_strip_avx2<4>(s, c0, n, w, y, first, e);
    default: return depthwise_strip_avx2<5>(s, c0, n, w, y, first, e);
  }
}

#else  // not x86-64 GCC/Clang: no AVX2 tiles

bool nhwc_cpu_has_avx2() { return false; }
AvxDenseFn nhwc_dense_avx2_fn(int) { return nullptr; }
void nhwc_depthwise_avx2(const DepthwiseStrip&, int64_t, int64_t, const float*, float*, int64_t,
                         const NhwcEpilogue&) {}

#endif

}  // namespace dnnx
