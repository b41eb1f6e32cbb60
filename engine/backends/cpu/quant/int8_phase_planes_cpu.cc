// Note [int8 phase planes] (int8_phase_planes_cpu.h).
#include "backends/cpu/quant/int8_phase_planes_cpu.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

namespace dnnx {

namespace {

int64_t floor_div2(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

// Along one dim: every tap reading inside X (length `in`) reads inside its phase (length `out`).
bool dim_fits(int64_t kernel, int64_t pad, int64_t in, int64_t out) {
  for (int64_t k = 0; k < kernel; ++k) {
    const int64_t a = floor_div2(k - pad);
    for (int64_t o = 0; o < out; ++o) {
      const int64_t at = 2 * o - pad + k;  // = 2 (o + a) + r
      if (at >= 0 && at < in && o + a >= out) return false;
    }
  }
  return true;
}

// bits [from, to) of 64, clamped
uint64_t bits(int64_t from, int64_t to) {
  from = from < 0 ? 0 : from > 64 ? 64 : from;
  to = to < from ? from : to > 64 ? 64 : to;
  return to - from == 64 ? ~uint64_t{0} : ((uint64_t{1} << (to - from)) - 1) << from;
}

// One X row of in_w bytes -> its even bytes (to `even`, if not null) and odd ones (`odd`), out_w
// each, zp where 2 j (+ 1) >= in_w: per 64 source bytes one masked load and one vpermb.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi"))) void split_row(const uint8_t* row, int64_t in_w,
                                                                               int64_t out_w, __m512i zpv,
                                                                               uint8_t* even, uint8_t* odd) {
  alignas(64) static const uint8_t kOrder[64] = {
      0,  2,  4,  6,  8,  10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40, 42,
      44, 46, 48, 50, 52, 54, 56, 58, 60, 62, 1,  3,  5,  7,  9,  11, 13, 15, 17, 19, 21, 23,
      25, 27, 29, 31, 33, 35, 37, 39, 41, 43, 45, 47, 49, 51, 53, 55, 57, 59, 61, 63};
  const __m512i order = _mm512_load_si512(kOrder);
  for (int64_t j = 0; j < out_w; j += 32) {
    const __m512i v = _mm512_mask_loadu_epi8(zpv, bits(0, in_w - 2 * j), row + 2 * j);
    const __m512i s = _mm512_permutexvar_epi8(order, v);
    const auto keep = static_cast<__mmask32>(bits(0, out_w - j));
    if (even) _mm256_mask_storeu_epi8(even + j, keep, _mm512_castsi512_si256(s));
    if (odd) _mm256_mask_storeu_epi8(odd + j, keep, _mm512_extracti64x4_epi64(s, 1));
  }
}

}  // namespace

void shifted_plane_masks(int64_t h, int64_t w, int64_t dy, int64_t dx, int64_t j0, int64_t len, uint64_t* m) {
  std::memset(m, 0, static_cast<size_t>((len + 63) / 64) * sizeof(uint64_t));
  const int64_t lo = std::max<int64_t>(0, -dx), hi = std::min(w, w - dx);  // the columns ow inside
  if (lo >= hi) return;
  for (int64_t oh = j0 / w; oh * w < j0 + len; ++oh) {
    if (oh + dy < 0 || oh + dy >= h) continue;
    // bits [from, to) relative to j0
    int64_t from = std::max(oh * w + lo, j0) - j0;
    const int64_t to = std::min(oh * w + hi, j0 + len) - j0;
    while (from < to) {
      const int64_t word = from >> 6, end = std::min(to, (word + 1) * 64);
      m[word] |= bits(from - word * 64, end - word * 64);
      from = end;
    }
  }
}

bool phase_planes_fit(const ConvGeometry& g, PhasePlanes& out) {
  static const bool cpu = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi");
  if (!cpu || g.input.size() != 3 || g.input[0] != 1 || g.kernel[0] != 1 || g.output[0] != 1) return false;
  if (g.strides[1] != 2 || g.strides[2] != 2 || g.dilations[1] != 1 || g.dilations[2] != 1) return false;
  const int64_t kh_n = g.kernel[1], kw_n = g.kernel[2], pt = g.pads_begin[1], pl = g.pads_begin[2];
  if (!dim_fits(kh_n, pt, g.input[1], g.output[1]) || !dim_fits(kw_n, pl, g.input[2], g.output[2])) return false;
  PhasePlanes p;
  for (int64_t kh = 0; kh < kh_n; ++kh) {
    for (int64_t kw = 0; kw < kw_n; ++kw) {
      const int64_t a = floor_div2(kh - pt), b = floor_div2(kw - pl);
      const int64_t phase = (kh - pt - 2 * a) * 2 + (kw - pl - 2 * b);
      if (p.slot_of[phase] < 0) p.slot_of[phase] = p.slots++;
      p.taps.push_back(PhaseTap{p.slot_of[phase], a, b});
    }
  }
  out = std::move(p);
  return true;
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi"))) void make_phase_planes(
    const PhasePlanes& p, const ConvGeometry& g, const uint8_t* x, int64_t channels, uint8_t zp, uint8_t* dst) {
  const int64_t in_h = g.input[1], in_w = g.input[2], out_h = g.output[1], out_w = g.output[2];
  const int64_t plane = out_h * out_w;
  const __m512i zpv = _mm512_set1_epi8(static_cast<char>(zp));
  for (int64_t ch = 0; ch < channels; ++ch) {
    uint8_t* base = dst + ch * p.slots * plane;
    for (int64_t r = 0; r < 2; ++r) {
      const int64_t s_even = p.slot_of[r * 2], s_odd = p.slot_of[r * 2 + 1];
      if (s_even < 0 && s_odd < 0) continue;
      for (int64_t i = 0; i < out_h; ++i) {
        uint8_t* even = s_even < 0 ? nullptr : base + s_even * plane + i * out_w;
        uint8_t* odd = s_odd < 0 ? nullptr : base + s_odd * plane + i * out_w;
        const int64_t row = 2 * i + r;
        if (row >= in_h) {  // past X: the zero point
          if (even) std::memset(even, zp, static_cast<size_t>(out_w));
          if (odd) std::memset(odd, zp, static_cast<size_t>(out_w));
          continue;
        }
        split_row(x + (ch * in_h + row) * in_w, in_w, out_w, zpv, even, odd);
      }
    }
  }
}

// As the stride-1 form (im2col_same_2d_avx512 in qdq_int8_cpu.cc): each tap's masks (which of the
// positions [j0, j1) read inside its phase plane) once per call, then one masked load per 64
// bytes of each row, merged into zp.
__attribute__((target("avx512f,avx512bw,avx512vl"))) void phase_im2col(const PhasePlanes& p, const ConvGeometry& g,
                                                                       const uint8_t* planes, int64_t channels,
                                                                       uint8_t zp, int64_t j0, int64_t j1,
                                                                       uint8_t* dst, int64_t ld) {
  const int64_t h = g.output[1], w = g.output[2], plane = h * w, len = j1 - j0;
  const int64_t taps = static_cast<int64_t>(p.taps.size()), blocks = (len + 63) / 64;
  thread_local std::vector<uint64_t> masks;  // [tap][block]
  masks.resize(static_cast<size_t>(taps * blocks));
  for (int64_t t = 0; t < taps; ++t) {  // Note [shifted plane masks]
    const PhaseTap& tap = p.taps[static_cast<size_t>(t)];
    shifted_plane_masks(h, w, tap.dy, tap.dx, j0, len, masks.data() + t * blocks);
  }
  const __m512i zpv = _mm512_set1_epi8(static_cast<char>(zp));
  const uint64_t tail = len % 64 == 0 ? ~uint64_t{0} : (uint64_t{1} << (len % 64)) - 1;
  uint8_t* row = dst;
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t t = 0; t < taps; ++t, row += ld) {
      const PhaseTap& tap = p.taps[static_cast<size_t>(t)];
      // position j reads src[j - j0] where inside
      const uint8_t* src = planes + (c * p.slots + tap.slot) * plane + j0 + tap.dy * w + tap.dx;
      const uint64_t* m = masks.data() + t * blocks;
      for (int64_t b = 0; b < blocks; ++b) {
        const __m512i v = _mm512_mask_loadu_epi8(zpv, m[b], src + b * 64);
        _mm512_mask_storeu_epi8(row + b * 64, b + 1 < blocks ? ~uint64_t{0} : tail, v);
      }
    }
  }
}

}  // namespace dnnx
