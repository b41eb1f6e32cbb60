// Int8Conv@NHWC's kernel (Note [int8 nhwc conv] in int8_conv_nhwc_cpu.h).

// No FMA in the epilogue (int8_epilogue_lanes.h): set before the includes.
#pragma GCC optimize("fp-contract=off")

#include "backends/cpu/quant/int8_conv_nhwc_cpu.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backends/cpu/quant/int8_epilogue_lanes.h"
#include "backends/cpu/quant/int8_gemm_cpu.h"
#include "backends/cpu/runtime/thread_pool.h"

namespace dnnx {

namespace {

using int8_epilogue::RequantizeLanes;
using int8_epilogue::ResidualLanes;

constexpr int64_t kRows = 6;        // pixels a tile
constexpr int64_t kLanes = 16;      // filters a vector
constexpr int64_t kMaxVectors = 4;  // vectors a block: 64 filters
constexpr int64_t kBlock = kLanes * kMaxVectors;
constexpr int64_t kGroupBytes = 192 * 1024;  // a work item's packed weights: this much, or one block where that is more

// The vectors of the block whose first filter is `first` (the last block's filters rounded up to whole vectors).
int64_t block_vectors(const Int8NhwcConv& c, int64_t first) {
  return std::min(kMaxVectors, (c.filters - first + kLanes - 1) / kLanes);
}

// Where block `first`'s packed weights start: every block before it is kBlock filters wide.
size_t block_offset(const Int8NhwcConv& c, int64_t first) {
  return static_cast<size_t>(first * c.taps() * c.channels);
}

// The channel factors of one run as vectors' worth of lanes (the RowParams split by field).
struct ChannelFactors {
  std::vector<float> mult, add;
  std::vector<int32_t> ibias;
};

// ---- the tile: kRows pixels x V vectors of filters, all taps and channels, then its epilogue ----

enum class Out { Bytes, Residual, Float };

// One tile's outputs: its first pixel's row of Y (and of Z), the block's channel factors.
struct TileOut {
  void* y;
  const uint8_t* z;
  int64_t ld;     // Y's (and Z's) row: M
  int64_t count;  // pixels stored (the rest computed, not stored)
  int64_t live;   // lanes of the block's last vector stored: 16, or fewer at the filters' tail
  const float *mult, *add;
  const int32_t* ibias;
};

// The epilogue's constants, once per run.
struct Lanes {
  int8_epilogue::RequantizeLanes plain;
  int8_epilogue::ResidualLanes joined;
  __m512 floor;
};

// Vector v of the tile's sums, pixel by pixel (acc[r]: pixel r's) -> Y (int8_epilogue_lanes.h:
// the NCHW kernel's operations, a lane per channel), the channel factors loaded once.
template <Out O>
__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline void emit(const Lanes& l, const TileOut& o,
                                                                                     int v, int vectors,
                                                                                     const __m512i (&acc)[kRows]) {
  const int64_t ch = v * kLanes;
  const bool whole = v + 1 < vectors || o.live == kLanes;
  const __mmask16 mask = whole ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << o.live) - 1);
  const __m512 mult = _mm512_loadu_ps(o.mult + ch), add = _mm512_loadu_ps(o.add + ch);
  const __m512i ibias = _mm512_loadu_si512(o.ibias + ch);
  for (int64_t r = 0; r < o.count; ++r) {
    const int64_t at = r * o.ld + ch;
    const __m512i a = _mm512_add_epi32(acc[r], ibias);
    if constexpr (O == Out::Float) {  // int8_epilogue::dequantize's steps
      const __m512 val = _mm512_max_ps(_mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(a), mult), add), l.floor);
      _mm512_mask_storeu_ps(static_cast<float*>(o.y) + at, mask, val);
      continue;
    }
    __m512i q;
    if constexpr (O == Out::Residual) {
      const __m128i zraw = whole ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(o.z + at)) : _mm_maskz_loadu_epi8(mask, o.z + at);
      q = l.joined.apply(a, zraw, mult, add);
    } else {
      q = l.plain.apply(a, mult, add);
    }
    uint8_t* dst = static_cast<uint8_t*>(o.y) + at;
    if (whole) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm512_cvtepi32_epi8(q));  // Note [epilogue stores]
    else _mm512_mask_cvtepi32_storeu_epi8(dst, mask, q);
  }
}

#define DNNX_NHWC_ROW(r)                                                    \
  {                                                                         \
    uint32_t four;                                                          \
    std::memcpy(&four, x##r + q * 4, 4);                                    \
    if constexpr (Signed) four ^= 0x80808080u; /* int8 x as x + 128 */      \
    const __m512i b = _mm512_set1_epi32(static_cast<int32_t>(four));        \
    c##r##0 = _mm512_dpbusd_epi32(c##r##0, b, w0);                          \
    if constexpr (V > 1) c##r##1 = _mm512_dpbusd_epi32(c##r##1, b, w1);     \
    if constexpr (V > 2) c##r##2 = _mm512_dpbusd_epi32(c##r##2, b, w2);     \
    if constexpr (V > 3) c##r##3 = _mm512_dpbusd_epi32(c##r##3, b, w3);     \
  }

#define DNNX_NHWC_EMIT(v)                                                   \
  {                                                                         \
    const __m512i column[kRows] = {c0##v, c1##v, c2##v, c3##v, c4##v, c5##v}; \
    emit<O>(l, o, v, V, column);                                            \
  }

// rows[r * taps + t]: pixel r's input row for tap t (C bytes); wp: the block's packed weights.
// The sums stay in registers into the epilogue. Named accumulators, not an array: GCC kept an
// array's sums moving through memory every step (as in int8_vnni_tile_cpu.cc).
template <int V, Out O, bool Signed>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) void nhwc_tile(const uint8_t* const* rows, int64_t taps,
                                                                               int64_t quads, const int8_t* wp,
                                                                               const Lanes& l, const TileOut& o) {
  __m512i c00 = _mm512_setzero_si512(), c01 = c00, c02 = c00, c03 = c00, c10 = c00, c11 = c00, c12 = c00, c13 = c00,
          c20 = c00, c21 = c00, c22 = c00, c23 = c00, c30 = c00, c31 = c00, c32 = c00, c33 = c00, c40 = c00,
          c41 = c00, c42 = c00, c43 = c00, c50 = c00, c51 = c00, c52 = c00, c53 = c00;
  for (int64_t t = 0; t < taps; ++t) {
    const uint8_t *x0 = rows[t], *x1 = rows[taps + t], *x2 = rows[2 * taps + t], *x3 = rows[3 * taps + t],
                  *x4 = rows[4 * taps + t], *x5 = rows[5 * taps + t];
    const int8_t* wt = wp + t * quads * V * 64;
    for (int64_t q = 0; q < quads; ++q) {
      const int8_t* wq = wt + q * V * 64;
      const __m512i w0 = _mm512_loadu_si512(wq);
      __m512i w1 = w0, w2 = w0, w3 = w0;
      if constexpr (V > 1) w1 = _mm512_loadu_si512(wq + 64);
      if constexpr (V > 2) w2 = _mm512_loadu_si512(wq + 128);
      if constexpr (V > 3) w3 = _mm512_loadu_si512(wq + 192);
      DNNX_NHWC_ROW(0)
      DNNX_NHWC_ROW(1)
      DNNX_NHWC_ROW(2)
      DNNX_NHWC_ROW(3)
      DNNX_NHWC_ROW(4)
      DNNX_NHWC_ROW(5)
    }
  }
  DNNX_NHWC_EMIT(0)
  if constexpr (V > 1) DNNX_NHWC_EMIT(1)
  if constexpr (V > 2) DNNX_NHWC_EMIT(2)
  if constexpr (V > 3) DNNX_NHWC_EMIT(3)
}
#undef DNNX_NHWC_ROW
#undef DNNX_NHWC_EMIT

using TileFn = void (*)(const uint8_t* const*, int64_t, int64_t, const int8_t*, const Lanes&, const TileOut&);

template <Out O, bool Signed>
TileFn tile_for(int vectors) {
  switch (vectors) {
    case 1: return nhwc_tile<1, O, Signed>;
    case 2: return nhwc_tile<2, O, Signed>;
    case 3: return nhwc_tile<3, O, Signed>;
    default: return nhwc_tile<4, O, Signed>;
  }
}

template <bool Signed>
TileFn tile_for(int vectors, const Int8NhwcOutput& out) {
  if (out.float_out) return tile_for<Out::Float, Signed>(vectors);
  return out.z ? tile_for<Out::Residual, Signed>(vectors) : tile_for<Out::Bytes, Signed>(vectors);
}

TileFn tile_for(int vectors, const Int8NhwcOutput& out, bool x_signed) {
  return x_signed ? tile_for<true>(vectors, out) : tile_for<false>(vectors, out);
}

__attribute__((target("avx512f,avx512bw,avx512vl"))) Lanes lanes_of(const Int8NhwcOutput& out) {
  return Lanes{int8_epilogue::RequantizeLanes(out.y), int8_epilogue::ResidualLanes(out.r, out.z_signed, out.residual, out.y),
               _mm512_set1_ps(out.relu ? 0.0f : -INFINITY)};
}

// A tile's pixels' input rows, rows[r * taps + t] for pixel `pixel` + r and tap t: the zero-point
// row where a tap falls in the padding, and for rows past the last pixel (computed, not stored).
// One division a tile; the pixels after it step their coordinates.
void tile_rows(const Int8NhwcConv& c, const uint8_t* x, const uint8_t* zp_row, int64_t pixel, int64_t count,
               const uint8_t** rows) {
  const int64_t taps = c.taps();
  if (taps == 1 && c.stride_h == 1 && c.stride_w == 1 && c.pad_top == 0 && c.pad_left == 0 && c.in_h == c.out_h &&
      c.in_w == c.out_w) {  // 1x1 over the same pixels: pixel p reads X's row p
    for (int64_t r = 0; r < kRows; ++r) rows[r] = r < count ? x + (pixel + r) * c.channels : zp_row;
    return;
  }
  const int64_t plane = c.out_h * c.out_w;
  int64_t n = pixel / plane, oh = (pixel % plane) / c.out_w, ow = pixel % c.out_w;
  for (int64_t r = 0; r < kRows; ++r, ++ow) {
    if (ow == c.out_w) {
      ow = 0;
      if (++oh == c.out_h) oh = 0, ++n;
    }
    const uint8_t** dst = rows + r * taps;
    if (r >= count) {
      std::fill(dst, dst + taps, zp_row);
      continue;
    }
    for (int64_t i = 0; i < c.kh; ++i) {
      const int64_t ih = oh * c.stride_h - c.pad_top + i * c.dil_h;
      const bool row_inside = ih >= 0 && ih < c.in_h;
      const uint8_t* line = x + (n * c.in_h + ih) * c.in_w * c.channels;
      for (int64_t j = 0; j < c.kw; ++j) {
        const int64_t iw = ow * c.stride_w - c.pad_left + j * c.dil_w;
        *dst++ = row_inside && iw >= 0 && iw < c.in_w ? line + iw * c.channels : zp_row;
      }
    }
  }
}

}  // namespace

void pack_int8_nhwc_weights(const int8_t* w, Int8NhwcConv& c) {
  const int64_t taps = c.taps(), quads = c.channels / 4, per_filter = taps * c.channels;
  const int64_t blocks = (c.filters + kBlock - 1) / kBlock;
  c.packed.assign(static_cast<size_t>(blocks * kBlock * per_filter), 0);
  c.row_sums.assign(static_cast<size_t>(c.filters), 0);
  for (int64_t first = 0; first < c.filters; first += kBlock) {
    const int64_t width = block_vectors(c, first) * kLanes;
    int8_t* dst = c.packed.data() + block_offset(c, first);
    for (int64_t l = 0; l < width && first + l < c.filters; ++l) {
      const int8_t* wf = w + (first + l) * per_filter;  // [kh, kw, C]
      int32_t sum = 0;
      for (int64_t t = 0; t < taps; ++t) {
        for (int64_t q = 0; q < quads; ++q) {
          for (int64_t i = 0; i < 4; ++i) {
            const int8_t v = wf[t * c.channels + q * 4 + i];
            dst[((t * quads + q) * width + l) * 4 + i] = v;
            sum += v;
          }
        }
      }
      c.row_sums[static_cast<size_t>(first + l)] = sum;
    }
  }
}

int32_t int8_nhwc_zero_point_term(const Int8NhwcConv& c, int32_t x_zp, int64_t m) {
  // the sums hold x_zp x w for every tap the window reads from the zero-point row and x x w for the
  // rest (int8 x taken as x + 128, its zero point with it); the exact ones are (x - x_zp) x w over
  // all taps: less x_zp x sum(w), modulo 2^32
  const int32_t zp = c.x_signed ? x_zp + 128 : x_zp;
  return static_cast<int32_t>(0u - static_cast<uint32_t>(zp) * static_cast<uint32_t>(c.row_sums[static_cast<size_t>(m)]));
}

void run_int8_nhwc_conv(const Int8NhwcConv& c, const uint8_t* x, uint8_t x_zp, const Int8NhwcOutput& out, void* y,
                        int workers) {
  const int64_t taps = c.taps(), quads = c.channels / 4, pixels = c.pixels();
  const int64_t blocks = (c.filters + kBlock - 1) / kBlock, tiles = (pixels + kRows - 1) / kRows;
  ChannelFactors f;  // padded to whole blocks: the last vector's dead lanes read zeros
  const size_t padded = static_cast<size_t>(blocks * kBlock);
  f.mult.assign(padded, 0.0f);
  f.add.assign(padded, 0.0f);
  f.ibias.assign(padded, 0);
  for (int64_t m = 0; m < c.filters; ++m) {
    f.mult[static_cast<size_t>(m)] = out.channels[m].mult;
    f.add[static_cast<size_t>(m)] = out.channels[m].add;
    f.ibias[static_cast<size_t>(m)] = out.channels[m].ibias;
  }
  const std::vector<uint8_t> zp_row(static_cast<size_t>(c.channels), x_zp);
  // Work items: a group of blocks x a run of tiles. A tile's pixel rows serve every block of its
  // group (read once, then from L1) while the group's weights stay in L2 (kGroupBytes): all of a
  // narrow layer's filters, one block of a wide 3x3 layer's.
  const int64_t block_bytes = kBlock * taps * c.channels;
  const int64_t group = std::max<int64_t>(1, std::min(blocks, kGroupBytes / block_bytes)), groups = (blocks + group - 1) / group;
  const int64_t runs = std::max<int64_t>(1, std::min<int64_t>(tiles, 8 * workers)), per_run = (tiles + runs - 1) / runs;
  const Lanes lanes = lanes_of(out);
  const size_t out_bytes = out.float_out ? sizeof(float) : 1;
  std::vector<TileFn> tile_fns(static_cast<size_t>(blocks));  // per block: its width, the output's form
  for (int64_t b = 0; b < blocks; ++b) {
    tile_fns[static_cast<size_t>(b)] = tile_for(static_cast<int>(block_vectors(c, b * kBlock)), out, c.x_signed);
  }
  auto work = [&](int64_t begin, int64_t end, int) {
    std::vector<const uint8_t*> rows(static_cast<size_t>(kRows * taps));
    for (int64_t item = begin; item < end; ++item) {
      const int64_t first_block = (item / runs) * group, last_block = std::min(blocks, first_block + group);
      const int64_t run = item % runs;
      for (int64_t tile = run * per_run; tile < std::min(tiles, (run + 1) * per_run); ++tile) {
        const int64_t pixel = tile * kRows, count = std::min(kRows, pixels - pixel);
        tile_rows(c, x, zp_row.data(), pixel, count, rows.data());
        for (int64_t b = first_block; b < last_block; ++b) {
          const int64_t first = b * kBlock;
          const int vectors = static_cast<int>(block_vectors(c, first));
          const TileOut o{static_cast<uint8_t*>(y) + static_cast<size_t>(pixel * c.filters + first) * out_bytes,
                          out.z ? static_cast<const uint8_t*>(out.z) + pixel * c.filters + first : nullptr,
                          c.filters, count, std::min(kLanes, c.filters - first - (vectors - 1) * kLanes),
                          f.mult.data() + first, f.add.data() + first, f.ibias.data() + first};
          tile_fns[static_cast<size_t>(b)](rows.data(), taps, quads, c.packed.data() + block_offset(c, first), lanes, o);
        }
      }
    }
  };
  const int64_t items = groups * runs;
  if (workers <= 1 || items < 2) work(0, items, 0);
  else cpu_thread_pool().parallel_for(items, work, workers);
}

bool int8_nhwc_conv_available() {
  static const bool on = __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw") &&
                         __builtin_cpu_supports("avx512vl") && int8_avx512(default_int8_path());
  return on;
}

}  // namespace dnnx
