// Int8Conv, Int8Gemm, Int8MatMul on the CPU (ops/quant/qdq_int8.cc has their inputs): the int8
// GEMM of int8_gemm_cpu.h (weights packed here, at plan time; Note [int8 gemm paths]), then one
// requantizing epilogue per C tile while it is in cache (int8_gemm_tiles), in the same kernel:
//   v = float(sum + B_int32) * (x_scale * w_scale[m] / y_scale)  (+ B_float[m] / y_scale)
//   y = saturate(round_half_even(v) + y_zero_point), at least y_zero_point after a Relu
// as onnxruntime's QLinearConv requantizes (Note [requantization]: the clamp in float before the
// rounding conversion, as MLAS). An int32 bias is added to the sums where its scale is
// x_scale * w_scale[m], as onnxruntime's QDQ fusion requires; otherwise it is dequantized and
// added as a float one. A residual (Int8Conv's inputs 10-14): the layer's own quantized value r
// as above (no Relu), then y = saturate(round((r_scale / y_scale) (r - r_zp) + (z_scale / y_scale)
// (z - z_zp) + y_zp)), QLinearAdd as MLAS computes it (the scale ratios once: ResidualParams in
// int8_epilogue_cpu.h), with the Relu's floor.
// Float output (no y_scale: Note [int8 float output] in fuse_qdq_int8.cc): the same exact sums,
// dequantized instead, y = float(sum + B_int32) * (x_scale * w_scale[m]) (+ B_float[m]), at least
// 0 after a Relu (int8_epilogue::dequantize).
// Conv: per image and group, im2col into uint8/int8 columns [C/group * k, out] (a padded tap
// reads x_zero_point) a few panels at a time (Note [tiled int8 im2col]) unless the conv is 1x1,
// stride 1, unpadded (X itself is the columns);
// Gemm and MatMul: X [rows, K] read transposed as the GEMM's B, Y written transposed.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "backends/cpu/quant/qdq_int8_cpu.h"
#include "backends/cpu/quant/int8_conv_nhwc_cpu.h"
#include "backends/cpu/quant/int8_epilogue_cpu.h"
#include "backends/cpu/quant/int8_gemm_cpu.h"
#include "backends/cpu/quant/int8_phase_planes_cpu.h"
#include "backends/cpu/quant/int_gemm_cpu.h"
#include "backends/cpu/quant/quant_codec.h"
#include "backends/cpu/runtime/thread_pool.h"
#include "ops/layout/channels_last.h"
#include "ops/quant/int_conv.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

enum class Base { Conv, Gemm, MatMul };

enum Slot { kX, kXScale, kXZp, kW, kWScale, kWZp, kYScale, kYZp, kBias, kBiasScale, kRScale, kRZp, kZ, kZScale, kZZp, kBnMult, kBnAdd, kSlots };

using int8_epilogue::QuantRange;
using int8_epilogue::ResidualParams;
using int8_epilogue::RowParams;
using int8_epilogue::range_of;
using int8_epilogue::requantize;
using int8_epilogue::add_residual;

int32_t read_8bit(const void* p, DType t, int64_t i) {
  return t == DType::Int8 ? static_cast<const int8_t*>(p)[i] : static_cast<const uint8_t*>(p)[i];
}

struct Int8Plan {
  Base base = Base::Conv;
  ConvGeometry g;  // Conv: expanded to 3 spatial dims
  int64_t batch = 1, channels = 0, filters = 0;  // filters: output channels (M of the GEMM)
  int64_t rows = 0, k = 0;                        // Gemm/MatMul: X's rows (N of the GEMM) and K
  bool pointwise = false;                         // 1x1, stride 1, no padding: X is the columns
  bool same_2d = false;  // 2-D, stride 1, no dilation, output the input's size: im2col rows are shifted planes
  bool phased = false;   // 2-D, stride 2: im2col rows are shifted phase planes (Note [int8 phase planes])
  bool phase_pointwise = false;  // phased, 1x1 unpadded: the one phase plane is the columns
  PhasePlanes phases;
  std::vector<Int8Weights> weights;               // one per group (none: depthwise)
  bool depthwise = false;          // 2-D, one filter per channel: Note [int8 depthwise]
  std::vector<float> dw_weights;  // depthwise: [C][kh * kw], W minus its zero point
  bool nhwc = false;              // Int8Conv@NHWC: Note [int8 nhwc conv]
  Int8NhwcConv nhwc_conv;
  DType x_type = DType::UInt8, y_type = DType::UInt8, z_type = DType::UInt8;
  bool relu = false, has_bias = false, int_bias = false, residual = false;
  bool clip = false;  // Note [int8 clip]: Y's range narrowed to [Q(clip_min), Q(clip_max)]
  float clip_min = 0, clip_max = 0;
  bool float_out = false;  // no y_scale: Y float32, the sums dequantized
  bool bn = false;         // a BatchNormalization taken in (Note [int8 batchnorm])
  bool w_scale_per_channel = false, bias_scale_per_channel = false;
  bool has_bias_scale = false;  // absent with an int32 bias: QLinearConv's, in the sums' scale
  bool has_x_zp = false, has_y_zp = false, has_r_zp = false, has_z_zp = false;  // else 0
  int workers = 1;
  // The node's input index of each Slot: the identity for Int8Conv/Int8Gemm/Int8MatMul; QGemm's
  // order for a QGemm run by this kernel (plan_qgemm_int8).
  std::array<int, kSlots> slot = [] {
    std::array<int, kSlots> a{};
    for (int i = 0; i < kSlots; ++i) a[static_cast<size_t>(i)] = i;
    return a;
  }();

  int64_t groups() const { return base == Base::Conv ? g.group : 1; }
  int64_t group_filters() const { return filters / groups(); }
  int64_t gemm_k() const { return base == Base::Conv ? channels / g.group * g.kernel_size() : k; }
  int64_t gemm_n() const { return base == Base::Conv ? g.output_size() : rows; }
  size_t gemm_scratch_bytes() const { return (int8_gemm_scratch_bytes(weights[0], gemm_n()) + 63) / 64 * 64; }
  size_t phase_bytes() const { return phased ? static_cast<size_t>(channels / g.group * phases.slots * g.output_size()) : 0; }
  size_t workspace_bytes() const { return depthwise || nhwc ? 64 : gemm_scratch_bytes() + phase_bytes() + 64; }
};

// dst[ow] = line[start + 2 ow] for ow in [first, last): the even bytes of 32-byte loads (SSSE3
// shuffles) while a load stays inside the row of in_w bytes, then one by one.
__attribute__((target("avx2"))) void gather_stride2_avx2(const uint8_t* line, int64_t start, int64_t first,
                                                         int64_t last, int64_t in_w, uint8_t* dst) {
  const __m128i even = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1);
  int64_t ow = first;
  for (; ow + 16 <= last && start + 2 * ow + 32 <= in_w; ow += 16) {
    const uint8_t* src = line + start + 2 * ow;
    const __m128i a = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src)), even);
    const __m128i b = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16)), even);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + ow), _mm_unpacklo_epi64(a, b));
  }
  for (; ow < last; ++ow) dst[ow] = line[start + 2 * ow];
}

template <class T>
void gather_stride2(const T* line, int64_t start, int64_t first, int64_t last, int64_t in_w, T* dst) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) {
    gather_stride2_avx2(reinterpret_cast<const uint8_t*>(line), start, first, last, in_w, reinterpret_cast<uint8_t*>(dst));
    return;
  }
  for (int64_t ow = first; ow < last; ++ow) dst[ow] = line[start + 2 * ow];
}

// Note [tiled int8 im2col]: the columns [j0, j1) of one image's group's im2col,
//     cols[(c, taps), j] = x[c, window tap of output position j], x_zero_point outside X,
// row r at dst + r * ld: the GEMM asks for a few panels at a time (int8_gemm_tiles_from), so the
// columns stay in L2 instead of a whole image's [C k, HW] (1.8 MB for a 3x3 conv of 64 channels on
// 56x56, written and read back once more per run). same_2d (stride 1, the output the input's
// size): a tap's row is the plane shifted, one copy, then its border set to zp; otherwise one
// segment per output row the range touches.
// same_2d with AVX-512BW: which positions of [j0, j1) a tap reads inside X depends on the tap
// alone, not the channel, so each tap's 64-bit masks (one per 64 columns) are made once per call
// and every row is one masked load per 64 columns, merged into zp (the masked-off bytes are not
// read: no fault past the plane). The per-row fills and copies of the form below cost more than
// the GEMM's share on small planes (14x14: 2304 rows of 196 bytes).
__attribute__((target("avx512f,avx512bw"))) void im2col_same_2d_avx512(const Int8Plan& p, const uint8_t* x, uint8_t zp,
                                                                       int64_t j0, int64_t j1, uint8_t* dst, int64_t ld) {
  const ConvGeometry& g = p.g;
  const int64_t in_h = g.input[1], in_w = g.input[2], plane = in_h * in_w, len = j1 - j0;
  const int64_t kh_n = g.kernel[1], kw_n = g.kernel[2], taps = kh_n * kw_n, blocks = (len + 63) / 64;
  thread_local std::vector<uint64_t> masks;  // [tap][block]
  masks.resize(static_cast<size_t>(taps * blocks));
  for (int64_t t = 0; t < taps; ++t) {  // Note [shifted plane masks]
    const int64_t dy = t / kw_n - g.pads_begin[1], dx = t % kw_n - g.pads_begin[2];
    shifted_plane_masks(in_h, in_w, dy, dx, j0, len, masks.data() + t * blocks);
  }
  const __m512i zpv = _mm512_set1_epi8(static_cast<char>(zp));
  const uint64_t tail = len % 64 == 0 ? ~uint64_t{0} : (uint64_t{1} << (len % 64)) - 1;
  uint8_t* row = dst;
  for (int64_t c = 0; c < p.channels / g.group; ++c) {
    for (int64_t t = 0; t < taps; ++t, row += ld) {
      const int64_t dy = t / kw_n - g.pads_begin[1], dx = t % kw_n - g.pads_begin[2];
      const uint8_t* src = x + c * plane + j0 + dy * in_w + dx;  // position j reads src[j - j0] where inside
      const uint64_t* m = masks.data() + t * blocks;
      for (int64_t b = 0; b < blocks; ++b) {
        const __m512i v = _mm512_mask_loadu_epi8(zpv, m[b], src + b * 64);
        _mm512_mask_storeu_epi8(row + b * 64, b + 1 < blocks ? ~uint64_t{0} : tail, v);
      }
    }
  }
}

// One output row's segment of an im2col row, AVX-512BW: d[i] for i < total is zp, but
// line[(i - pre) * stride] for i in [pre, pre + count) (stride 1 or 2): 64 (stride 1) or 32
// (stride 2: the low bytes of 16-bit lanes, vpmovwb) outputs per masked load and store, instead of
// the fills and copies of a few bytes each (46K of them per run for a 3x3, stride-2 conv on 28x28).
__attribute__((target("avx512f,avx512bw,avx512vl"))) void im2col_segment_avx512(uint8_t* d, const uint8_t* line, int64_t stride,
                                                                       int64_t pre, int64_t count, int64_t total,
                                                                       uint8_t zp) {
  auto bits = [](int64_t from, int64_t to) {  // bits [from, to) of 64, clamped
    from = std::clamp<int64_t>(from, 0, 64), to = std::clamp<int64_t>(to, from, 64);
    return to - from == 64 ? ~uint64_t{0} : ((uint64_t{1} << (to - from)) - 1) << from;
  };
  const __m512i zpv = _mm512_set1_epi8(static_cast<char>(zp));
  if (stride == 1) {
    for (int64_t o = 0; o < total; o += 64) {
      const __m512i v = _mm512_mask_loadu_epi8(zpv, bits(pre - o, pre + count - o), line + (o - pre));
      _mm512_mask_storeu_epi8(d + o, bits(0, total - o), v);
    }
    return;
  }
  const __m256i zp32 = _mm256_set1_epi8(static_cast<char>(zp));
  for (int64_t o = 0; o < total; o += 32) {
    // outputs [o, o + 32): valid ones i in [pre, pre + count) read byte 2 (i - pre) of line
    const int64_t first = std::max(pre, o) - o, last = std::min(pre + count, o + 32) - o;  // valid, relative to o
    const uint64_t load = first < last ? bits(2 * first, 2 * last - 1) : 0;
    const __m512i words = _mm512_maskz_loadu_epi8(load, line + 2 * (o - pre));
    const __m256i even = _mm512_cvtepi16_epi8(words);
    const __m256i v = _mm256_mask_blend_epi8(static_cast<__mmask32>(bits(first, last)), zp32, even);
    _mm256_mask_storeu_epi8(d + o, static_cast<__mmask32>(bits(0, total - o)), v);
  }
}

// The general 2-D case on narrow outputs (out_w < 64: a 3x3, stride-2 conv on 28x28 has 14-byte
// row segments, 46K of them per run, each a few calls), AVX-512: each tap's source offset
// within a channel's plane (or -1 outside X) is the same for every channel, so it is made once
// per call for the positions [j0, j1), and every row is 16-lane dword gathers at c * plane +
// offset, the byte wanted at the bottom of each dword. `readable` bytes from x on may be read: a
// dword whose 4 bytes would pass that end is read that many bytes lower and shifted down.
__attribute__((target("avx512f,avx512bw,avx512vl"))) void im2col_gather_avx512(const Int8Plan& p, const uint8_t* x,
                                                                              int64_t readable, uint8_t zp, int64_t j0,
                                                                              int64_t j1, uint8_t* dst, int64_t ld) {
  const ConvGeometry& g = p.g;
  const int64_t in_h = g.input[1], in_w = g.input[2], out_w = g.output[2], plane = in_h * in_w, len = j1 - j0;
  const int64_t kh_n = g.kernel[1], kw_n = g.kernel[2], taps = kh_n * kw_n;
  thread_local std::vector<int32_t> offsets;  // [tap][position]
  offsets.resize(static_cast<size_t>(taps * len));
  for (int64_t t = 0; t < taps; ++t) {
    const int64_t kh = t / kw_n, kw = t % kw_n;
    int64_t oh = j0 / out_w, ow = j0 % out_w;  // stepped along, not divided per position
    int32_t* off = offsets.data() + t * len;
    for (int64_t i = 0; i < len; ++i) {
      const int64_t ih = g.window_start(1, oh) + kh * g.dilations[1];
      const int64_t iw = g.window_start(2, ow) + kw * g.dilations[2];
      const bool inside = ih >= 0 && ih < in_h && iw >= 0 && iw < in_w;
      off[i] = inside ? static_cast<int32_t>(ih * in_w + iw) : -1;
      if (++ow == out_w) ow = 0, ++oh;
    }
  }
  const __m128i zpv = _mm_set1_epi8(static_cast<char>(zp));
  const __m512i limit = _mm512_set1_epi32(static_cast<int32_t>(readable - 4)), zero = _mm512_setzero_si512();
  uint8_t* row = dst;
  for (int64_t c = 0; c < p.channels / g.group; ++c) {
    const __m512i base = _mm512_set1_epi32(static_cast<int32_t>(c * plane));
    for (int64_t t = 0; t < taps; ++t, row += ld) {
      const int32_t* off = offsets.data() + t * len;
      for (int64_t i = 0; i < len; i += 16) {
        const __mmask16 lanes = len - i >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (len - i)) - 1);
        const __m512i o = _mm512_maskz_loadu_epi32(lanes, off + i);
        const __mmask16 inside = _mm512_mask_cmpge_epi32_mask(lanes, o, zero);
        const __m512i at = _mm512_add_epi32(o, base);
        const __m512i safe = _mm512_min_epi32(at, limit);  // the dword's 4 bytes inside what may be read
        const __m512i v = _mm512_mask_i32gather_epi32(zero, inside, safe, x, 1);
        const __m512i b = _mm512_srlv_epi32(v, _mm512_slli_epi32(_mm512_sub_epi32(at, safe), 3));
        _mm_mask_storeu_epi8(row + i, lanes, _mm_mask_mov_epi8(zpv, inside, _mm512_cvtepi32_epi8(b)));
      }
    }
  }
}

template <class T>
void im2col_columns(const Int8Plan& p, const T* x, int64_t readable, T zp, int64_t j0, int64_t j1, T* dst, int64_t ld) {
  const ConvGeometry& g = p.g;
  const int64_t in_d = g.input[0], in_h = g.input[1], in_w = g.input[2];
  const int64_t out_h = g.output[1], out_w = g.output[2];
  const int64_t len = j1 - j0;
  static const bool avx512bw = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                               __builtin_cpu_supports("avx512vl");
  if (p.same_2d && avx512bw) {
    im2col_same_2d_avx512(p, reinterpret_cast<const uint8_t*>(x), static_cast<uint8_t>(zp), j0, j1,
                          reinterpret_cast<uint8_t*>(dst), ld);
    return;
  }
  if (avx512bw && in_d == 1 && out_w < 64 && readable >= 4 && readable < (int64_t{1} << 31)) {
    im2col_gather_avx512(p, reinterpret_cast<const uint8_t*>(x), readable, static_cast<uint8_t>(zp), j0, j1,
                         reinterpret_cast<uint8_t*>(dst), ld);
    return;
  }
  if (p.same_2d) {
    const int64_t plane = in_h * in_w;
    T* row = dst;
    for (int64_t c = 0; c < p.channels / g.group; ++c) {
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw, row += ld) {
          const int64_t dy = kh - g.pads_begin[1], dx = kw - g.pads_begin[2], shift = dy * in_w + dx;
          // position j reads plane[j + shift] where that is inside the plane
          const int64_t first = std::clamp<int64_t>(-shift, j0, j1), last = std::clamp<int64_t>(plane - shift, first, j1);
          std::fill(row, row + (first - j0), zp);
          std::memcpy(row + (first - j0), x + c * plane + first + shift, static_cast<size_t>(last - first) * sizeof(T));
          std::fill(row + (last - j0), row + len, zp);
          // output rows whose input row dy away is outside X: all zp
          const int64_t top = std::max<int64_t>(0, -dy) * in_w, bottom = std::min(in_h, in_h - dy) * in_w;
          if (j0 < top) std::fill(row, row + (std::min(top, j1) - j0), zp);
          if (j1 > bottom) std::fill(row + (std::max(bottom, j0) - j0), row + len, zp);
          if (dx == 0) continue;
          // the columns that wrapped to the next or last row: ow < -dx or ow >= in_w - dx
          for (int64_t oh = j0 / in_w; oh * in_w < j1; ++oh) {
            const int64_t a = dx < 0 ? oh * in_w : oh * in_w + std::max<int64_t>(0, in_w - dx);
            const int64_t b = dx < 0 ? oh * in_w + std::min(in_w, -dx) : (oh + 1) * in_w;
            const int64_t lo = std::max(a, j0), hi = std::min(b, j1);
            if (lo < hi) std::fill(row + (lo - j0), row + (hi - j0), zp);
          }
        }
      }
    }
    return;
  }
  T* row = dst;
  for (int64_t c = 0; c < p.channels / g.group; ++c) {
    const T* plane = x + c * in_d * in_h * in_w;
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw, row += ld) {
          const int64_t stride = g.strides[2], start = g.window_start(2, 0) + kw * g.dilations[2];
          // the outputs whose tap lands inside X's row: [first, last)
          const int64_t first = start >= 0 ? 0 : std::min(out_w, (-start + stride - 1) / stride);
          const int64_t last = std::max(first, std::min(out_w, start < in_w ? (in_w - start + stride - 1) / stride : 0));
          for (int64_t r = j0 / out_w; r * out_w < j1; ++r) {  // output row r = (od, oh): its positions [a, b)
            const int64_t a = std::max<int64_t>(0, j0 - r * out_w), b = std::min(out_w, j1 - r * out_w);
            T* d = row + (r * out_w + a - j0);
            const int64_t od = r / out_h, oh = r % out_h;
            const int64_t id = g.window_start(0, od) + kd * g.dilations[0];
            const int64_t ih = g.window_start(1, oh) + kh * g.dilations[1];
            if (!(id >= 0 && id < in_d && ih >= 0 && ih < in_h)) {
              std::fill(d, d + (b - a), zp);
              continue;
            }
            const T* line = plane + (id * in_h + ih) * in_w;
            const int64_t lo = std::clamp(first, a, b), hi = std::clamp(last, lo, b);
            if (avx512bw && (stride == 1 || stride == 2)) {
              im2col_segment_avx512(reinterpret_cast<uint8_t*>(d), reinterpret_cast<const uint8_t*>(line + start + lo * stride),
                                    stride, lo - a, hi - lo, b - a, static_cast<uint8_t>(zp));
              continue;
            }
            std::fill(d, d + (lo - a), zp);
            if (stride == 1) {
              std::memcpy(d + (lo - a), line + start + lo, static_cast<size_t>(hi - lo) * sizeof(T));
            } else if (stride == 2) {
              gather_stride2(line, start + 2 * lo, 0, hi - lo, in_w, d + (lo - a));
            } else {
              for (int64_t ow = lo; ow < hi; ++ow) d[ow - a] = line[start + ow * stride];
            }
            std::fill(d + (hi - a), d + (b - a), zp);
          }
        }
      }
    }
  }
}

// acc[i] = sum over taps t of w[t] * q[off[t] + i], i < n: one depthwise plane, in float32 (every
// value an integer and every sum below 2^24: Note [int8 depthwise], so exact in any order), 64
// outputs at a time held in registers over all the taps (a pass per tap over the plane moved the
// sums through L2 once per tap: 4x slower).
void depthwise_plane_portable(float* acc, const float* q, const int64_t* off, const float* w, int64_t taps, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    float sum = 0;
    for (int64_t t = 0; t < taps; ++t) sum += w[t] * q[off[t] + i];
    acc[i] = sum;
  }
}

__attribute__((target("avx512f"))) void depthwise_plane_avx512(float* acc, const float* q, const int64_t* off,
                                                               const float* w, int64_t taps, int64_t n) {
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t t = 0; t < taps; ++t) {
      const float* src = q + off[t] + i;
      const __m512 wt = _mm512_set1_ps(w[t]);
      a0 = _mm512_fmadd_ps(wt, _mm512_loadu_ps(src), a0);
      a1 = _mm512_fmadd_ps(wt, _mm512_loadu_ps(src + 16), a1);
      a2 = _mm512_fmadd_ps(wt, _mm512_loadu_ps(src + 32), a2);
      a3 = _mm512_fmadd_ps(wt, _mm512_loadu_ps(src + 48), a3);
    }
    _mm512_storeu_ps(acc + i, a0);
    _mm512_storeu_ps(acc + i + 16, a1);
    _mm512_storeu_ps(acc + i + 32, a2);
    _mm512_storeu_ps(acc + i + 48, a3);
  }
  for (; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1);
    __m512 a0 = _mm512_setzero_ps();
    for (int64_t t = 0; t < taps; ++t) {
      a0 = _mm512_fmadd_ps(_mm512_set1_ps(w[t]), _mm512_maskz_loadu_ps(m, q + off[t] + i), a0);
    }
    _mm512_mask_storeu_ps(acc + i, m, a0);
  }
}

__attribute__((target("avx2,fma"))) void depthwise_plane_avx2(float* acc, const float* q, const int64_t* off,
                                                              const float* w, int64_t taps, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t t = 0; t < taps; ++t) {
      const float* src = q + off[t] + i;
      const __m256 wt = _mm256_set1_ps(w[t]);
      a0 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(src), a0);
      a1 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(src + 8), a1);
      a2 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(src + 16), a2);
      a3 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(src + 24), a3);
    }
    _mm256_storeu_ps(acc + i, a0);
    _mm256_storeu_ps(acc + i + 8, a1);
    _mm256_storeu_ps(acc + i + 16, a2);
    _mm256_storeu_ps(acc + i + 24, a3);
  }
  depthwise_plane_portable(acc + i, q + i, off, w, taps, n - i);
}

void int8_depthwise_plane(float* acc, const float* q, const int64_t* off, const float* w, int64_t taps, int64_t n) {
  static const Int8Path path = default_int8_path();  // DNNX_INT8_AVX2=1 takes the AVX2 form
  if (int8_avx512(path)) depthwise_plane_avx512(acc, q, off, w, taps, n);
  else if (path != Int8Path::Portable) depthwise_plane_avx2(acc, q, off, w, taps, n);
  else depthwise_plane_portable(acc, q, off, w, taps, n);
}

// sums[j] = int32(acc[j]), j < n: the depthwise plane's float sums, integers below 2^24 (exact).
__attribute__((target("avx512f"))) void sums_from_floats_avx512(int32_t* sums, const float* acc, int64_t n) {
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    _mm512_storeu_si512(sums + j, _mm512_cvttps_epi32(_mm512_loadu_ps(acc + j)));
  }
  for (; j < n; ++j) sums[j] = static_cast<int32_t>(acc[j]);
}
void int8_sums_from_floats(int32_t* sums, const float* acc, int64_t n) {
  static const Int8Path path = default_int8_path();
  if (int8_avx512(path)) {
    sums_from_floats_avx512(sums, acc, n);
    return;
  }
  for (int64_t j = 0; j < n; ++j) sums[j] = static_cast<int32_t>(acc[j]);
}

// dst[j] = src[j * step] - zp, j < n (8-bit values, signed or not): a depthwise phase row.
inline __attribute__((always_inline)) void depthwise_row_body(float* dst, const uint8_t* src, int64_t step, int64_t n,
                                                              int32_t zp, bool is_signed) {
  if (step == 1 && is_signed) {
    for (int64_t j = 0; j < n; ++j) dst[j] = static_cast<float>(static_cast<int8_t>(src[j]) - zp);
  } else if (step == 1) {
    for (int64_t j = 0; j < n; ++j) dst[j] = static_cast<float>(src[j] - zp);
  } else if (is_signed) {
    for (int64_t j = 0; j < n; ++j) dst[j] = static_cast<float>(static_cast<int8_t>(src[j * step]) - zp);
  } else {
    for (int64_t j = 0; j < n; ++j) dst[j] = static_cast<float>(src[j * step] - zp);
  }
}
// Note [strided depthwise rows]: a stride-2 depthwise conv reads each phase plane from every
// other byte of an input row; the scalar gather took most of EfficientNet-B0's 96-channel
// 112x112 stride-2 layer. 32 bytes -> 32 int32 in two registers -> their 16 even elements
// (one permute) -> float32, minus the zero point.
__attribute__((target("avx512f,avx512bw"))) void depthwise_row_avx512(float* dst, const uint8_t* src, int64_t step,
                                                                      int64_t n, int32_t zp, bool is_signed) {
  int64_t j = 0;
  const __m512 zpf = _mm512_set1_ps(static_cast<float>(zp));
  if (step == 1) {
    for (; j + 16 <= n; j += 16) {
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + j));
      const __m512i v = is_signed ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
      _mm512_storeu_ps(dst + j, _mm512_sub_ps(_mm512_cvtepi32_ps(v), zpf));
    }
  } else if (step == 2) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    // 16 outputs read bytes [2j, 2j + 31]: only while 2j + 32 <= the bytes the row has (2n - 1)
    for (; j + 16 <= n && 2 * j + 32 <= 2 * n - 1; j += 16) {
      const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * j));
      const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * j + 16));
      const __m512i a = is_signed ? _mm512_cvtepi8_epi32(lo) : _mm512_cvtepu8_epi32(lo);
      const __m512i b = is_signed ? _mm512_cvtepi8_epi32(hi) : _mm512_cvtepu8_epi32(hi);
      const __m512i v = _mm512_permutex2var_epi32(a, even, b);
      _mm512_storeu_ps(dst + j, _mm512_sub_ps(_mm512_cvtepi32_ps(v), zpf));
    }
  }
  depthwise_row_body(dst + j, src + j * step, step, n - j, zp, is_signed);
}
__attribute__((target("avx2"))) void depthwise_row_avx2(float* dst, const uint8_t* src, int64_t step, int64_t n,
                                                        int32_t zp, bool is_signed) {
  depthwise_row_body(dst, src, step, n, zp, is_signed);
}
void int8_depthwise_row(float* dst, const uint8_t* src, int64_t step, int64_t n, int32_t zp, bool is_signed) {
  static const Int8Path path = default_int8_path();
  if (int8_avx512(path)) depthwise_row_avx512(dst, src, step, n, zp, is_signed);
  else if (path != Int8Path::Portable) depthwise_row_avx2(dst, src, step, n, zp, is_signed);
  else depthwise_row_body(dst, src, step, n, zp, is_signed);
}

class Int8Kernel final : public Kernel {
 private:
  // What every row of one run shares: the per-channel factors and the parameters' values.
  struct RunParams {
    std::vector<RowParams> rows;
    QuantRange y, r;  // y's range (with the Relu's floor); r: the residual's intermediate
    ResidualParams residual{};
    const void* z = nullptr;
  };

 public:
  explicit Int8Kernel(Int8Plan plan) : p_(std::move(plan)) {}

  void run(const KernelArgs& args) const override {
    auto align = [](uint8_t* at) { return reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(at) + 63) & ~uintptr_t{63}); };
    uint8_t* scratch = align(static_cast<uint8_t*>(args.workspace));
    const bool x_signed = p_.x_type == DType::Int8;
    const int32_t x_zp = p_.has_x_zp ? read_8bit(arg<void>(args, kXZp), p_.x_type, 0) : 0;
    const RunParams run = run_params(args, x_signed, x_zp);
    const int64_t n = p_.gemm_n(), mg = p_.group_filters();
    const auto* x = arg<uint8_t>(args, kX);  // 8-bit: bytes
    void* y = args.outputs[0];  // 8-bit, or float32 (float_out)
    if (p_.depthwise) {
      run_depthwise(run, x, x_signed, x_zp, y);
      return;
    }
    if (p_.nhwc) {  // Note [int8 nhwc conv]
      Int8NhwcOutput out;
      out.channels = run.rows.data();
      out.float_out = p_.float_out;
      out.relu = p_.relu;
      out.y = run.y;
      out.r = run.r;
      out.z = p_.residual ? run.z : nullptr;
      out.z_signed = p_.z_type == DType::Int8;
      out.residual = run.residual;
      run_int8_nhwc_conv(p_.nhwc_conv, x, static_cast<uint8_t>(x_zp), out, y, p_.workers);
      return;
    }
    if (p_.base != Base::Conv) {  // C^T: the GEMM's row m is Y's column m
      int8_gemm_tiles(p_.weights[0], x, x_signed, x_zp, n, 1, p_.k,
                      [&](int64_t m0, int64_t rows, int64_t j0, int64_t cnt, const int32_t* c, int64_t ld) {
                        for (int64_t r = 0; r < rows; ++r) {
                          epilogue(run, m0 + r, c + r * ld, cnt, y, j0 * p_.filters + m0 + r, p_.filters, -1);
                        }
                      },
                      scratch, p_.workers, false);
      return;
    }
    const bool tile_bytes = !p_.float_out && int8_epilogue::has_byte_epilogues();
    const int64_t in_image = p_.channels * p_.g.input_size(), in_group = p_.channels / p_.g.group * p_.g.input_size();
    for (int64_t b = 0; b < p_.batch; ++b) {
      for (int64_t grp = 0; grp < p_.g.group; ++grp) {
        const uint8_t* xg = x + b * in_image + grp * in_group;
        const int64_t first = (b * p_.filters + grp * mg) * n;  // Y's offset of the group's first filter
        auto sink = [&](int64_t m0, int64_t rows, int64_t j0, int64_t cnt, const int32_t* c, int64_t ld) {
          if (tile_bytes) {  // the whole tile in one call
            const int64_t at = first + m0 * n + j0;
            const RowParams* params = run.rows.data() + grp * mg + m0;
            uint8_t* out = static_cast<uint8_t*>(y) + at;
            if (p_.residual) {
              int8_epilogue::residual_tile_bytes(c, ld, rows, cnt, params, run.r,
                                                 static_cast<const uint8_t*>(run.z) + at,
                                                 p_.z_type == DType::Int8, run.residual, run.y, out, n);
            } else {
              int8_epilogue::requantize_tile_bytes(c, ld, rows, cnt, params, run.y, out, n);
            }
            return;
          }
          for (int64_t r = 0; r < rows; ++r) {
            const int64_t at = first + (m0 + r) * n + j0;
            epilogue(run, grp * mg + m0 + r, c + r * ld, cnt, y, at, 1, p_.residual ? at : -1);
          }
        };
        const Int8Weights& w = p_.weights[static_cast<size_t>(grp)];
        if (p_.pointwise) {  // X is the columns
          int8_gemm_tiles(w, xg, x_signed, x_zp, n, n, 1, sink, scratch, p_.workers, false);
          continue;
        }
        if (p_.phased) {  // Note [int8 phase planes]
          uint8_t* planes = scratch + p_.gemm_scratch_bytes();
          const int64_t cg = p_.channels / p_.g.group;
          make_phase_planes(p_.phases, p_.g, xg, cg, static_cast<uint8_t>(x_zp), planes);
          if (p_.phase_pointwise) {
            int8_gemm_tiles(w, planes, x_signed, x_zp, n, n, 1, sink, scratch, p_.workers, false);
            continue;
          }
          const Int8ColumnSource shifted = [&](int64_t j0, int64_t j1, uint8_t* dst, int64_t ld) {
            phase_im2col(p_.phases, p_.g, planes, cg, static_cast<uint8_t>(x_zp), j0, j1, dst, ld);
          };
          int8_gemm_tiles_from(w, shifted, x_signed, x_zp, n, sink, scratch, p_.workers, false);
          continue;
        }
        const int64_t readable = (p_.batch - b) * in_image - grp * in_group;  // X's bytes from xg on
        const Int8ColumnSource columns = [&](int64_t j0, int64_t j1, uint8_t* dst, int64_t ld) {  // Note [tiled int8 im2col]
          if (x_signed) {
            im2col_columns(p_, reinterpret_cast<const int8_t*>(xg), readable, static_cast<int8_t>(x_zp), j0, j1,
                           reinterpret_cast<int8_t*>(dst), ld);
          } else {
            im2col_columns(p_, xg, readable, static_cast<uint8_t>(x_zp), j0, j1, dst, ld);
          }
        };
        int8_gemm_tiles_from(w, columns, x_signed, x_zp, n, sink, scratch, p_.workers, false);
      }
    }
  }

 private:
  // Note [int8 depthwise]: a GEMM per channel would be M = 1, K = kh * kw (an 8-row tile, one row
  // used, K padded to 4): instead each (image, channel) plane on its own, by one worker (so the
  // thread count changes no bit). X minus its zero point goes into float32 phase planes, 0 at the
  // pads: plane (pr, pc) holds the padded input's rows pr, pr + sh, ... and columns pc, pc + sw,
  // ..., so a tap (kh, kw) reads one of them at the offset (kh dh / sh, kw dw / sw) with the
  // output's own row and column steps. The sums are kept with the planes' row pitch qw (columns
  // past out_w computed and dropped), which makes every tap a contiguous multiply-add over the
  // plane (int8_depthwise_plane: 64 outputs in registers over all taps). float32 is exact here:
  // |x - zp| and |w - zp| <= 255, so with kh * kw <= 256 taps (else the grouped GEMM) every partial
  // sum is an integer below 2^24; the int32 sums then go through the layer's epilogue, row by row.
  void run_depthwise(const RunParams& run, const uint8_t* x, bool x_signed, int32_t x_zp, void* y) const {
    const ConvGeometry& g = p_.g;
    const int64_t in_h = g.input[1], in_w = g.input[2], out_h = g.output[1], out_w = g.output[2];
    const int64_t kh_n = g.kernel[1], kw_n = g.kernel[2], sh = g.strides[1], sw = g.strides[2];
    const int64_t dh = g.dilations[1], dw = g.dilations[2], pt = g.pads_begin[1], pl = g.pads_begin[2];
    const int64_t rows = (out_h - 1) * sh + (kh_n - 1) * dh + 1;  // the padded input rows and columns read
    const int64_t cols = (out_w - 1) * sw + (kw_n - 1) * dw + 1;
    const int64_t qh = (rows + sh - 1) / sh, qw = (cols + sw - 1) / sw;  // one phase plane
    const int64_t plane_elems = qh * qw + qw;  // a row's slack: the last row's dropped columns read past it
    const int64_t out_size = out_h * out_w;
    std::vector<int64_t> offsets;  // tap (kh, kw)'s values in q: its phase plane, at its offset
    for (int64_t kh = 0; kh < kh_n; ++kh) {
      for (int64_t kw = 0; kw < kw_n; ++kw) {
        const int64_t tr = kh * dh, tc = kw * dw;
        offsets.push_back(((tr % sh) * sw + tc % sw) * plane_elems + (tr / sh) * qw + tc / sw);
      }
    }
    auto work = [&](int64_t first, int64_t last, int) {
      thread_local std::vector<float> q, acc;
      thread_local std::vector<int32_t> sums;
      q.resize(static_cast<size_t>(sh * sw * plane_elems));
      acc.resize(static_cast<size_t>(out_h * qw));
      sums.resize(static_cast<size_t>(out_size));
      for (int64_t plane = first; plane < last; ++plane) {
        const int64_t c = plane % p_.channels;
        const uint8_t* xp = x + plane * in_h * in_w;
        for (int64_t pr = 0; pr < sh; ++pr) {
          for (int64_t pc = 0; pc < sw; ++pc) {
            float* qp = q.data() + (pr * sw + pc) * plane_elems;
            std::fill(qp + qh * qw, qp + plane_elems, 0.0f);
            // q[pr][pc][r][j] = X[r sh + pr - pt, j sw + pc - pl] - x_zp, 0 outside X
            const int64_t off = pc - pl;  // the input column of j = 0
            const int64_t lo = std::min(qw, off >= 0 ? 0 : (-off + sw - 1) / sw);
            const int64_t hi = std::max(lo, std::min(qw, in_w - off <= 0 ? 0 : (in_w - off + sw - 1) / sw));
            for (int64_t r = 0; r < qh; ++r) {
              float* dst = qp + r * qw;
              const int64_t ir = r * sh + pr - pt;
              if (ir < 0 || ir >= in_h) {
                std::fill(dst, dst + qw, 0.0f);
                continue;
              }
              std::fill(dst, dst + lo, 0.0f);
              int8_depthwise_row(dst + lo, xp + ir * in_w + lo * sw + off, sw, hi - lo, x_zp, x_signed);
              std::fill(dst + hi, dst + qw, 0.0f);
            }
          }
        }
        int8_depthwise_plane(acc.data(), q.data(), offsets.data(), p_.dw_weights.data() + c * kh_n * kw_n, kh_n * kw_n,
                             out_h * qw);
        // the plane's sums, its rows packed (acc's rows are qw apart), then one epilogue call for
        // the plane: a call per output row cost more than the taps on 7x7 and 14x14 planes
        for (int64_t oh = 0; oh < out_h; ++oh) {
          int8_sums_from_floats(sums.data() + oh * out_w, acc.data() + oh * qw, out_w);  // exact: integers < 2^24
        }
        const int64_t at = plane * out_size;
        epilogue(run, c, sums.data(), out_size, y, at, 1, p_.residual ? at : -1);
      }
    };
    const int64_t planes = p_.batch * p_.channels;
    if (p_.workers <= 1 || planes < 2) work(0, planes, 0);
    else cpu_thread_pool().parallel_for(planes, work, p_.workers);
  }

  std::vector<RowParams> row_params(const KernelArgs& args) const {
    const float x_scale = arg<float>(args, kXScale)[0];
    const float* w_scale = arg<float>(args, kWScale);
    const float out_scale = p_.float_out ? 1.0f : arg<float>(args, p_.residual ? kRScale : kYScale)[0];
    std::vector<RowParams> out(static_cast<size_t>(p_.filters));
    for (int64_t m = 0; m < p_.filters; ++m) {
      RowParams& r = out[static_cast<size_t>(m)];
      const float xw = x_scale * w_scale[p_.w_scale_per_channel ? m : 0];
      float bias = 0;  // the float bias (an int32 one of another scale dequantized)
      if (p_.has_bias && !p_.int_bias) {
        bias = arg<float>(args, kBias)[m];
      } else if (p_.has_bias) {
        const int32_t b = arg<int32_t>(args, kBias)[m];
        // no bias_scale: QLinearConv's bias, in the sums' own scale x_scale * w_scale[m]
        const float bs = p_.has_bias_scale ? arg<float>(args, kBiasScale)[p_.bias_scale_per_channel ? m : 0] : xw;
        if (bs == xw) r.ibias = b;
        else bias = static_cast<float>(b) * bs;
      }
      if (p_.bn) {  // v * bn_mult + bn_add, with v = float(sum + ibias) * xw + bias
        const float s = arg<float>(args, kBnMult)[m], a = arg<float>(args, kBnAdd)[m];
        r.mult = xw * s / out_scale;
        r.add = (bias * s + a) / out_scale;
      } else {
        r.mult = xw / out_scale;
        r.add = bias / out_scale;
      }
    }
    return out;
  }


  // x_zp: the zero point's term of the sums joins each row's int32 bias (int8_gemm_row_correction).
  RunParams run_params(const KernelArgs& args, bool x_signed, int32_t x_zp) const {
    RunParams run;
    run.rows = row_params(args);
    const int64_t mg = p_.group_filters();
    for (int64_t m = 0; m < p_.filters; ++m) {
      RowParams& r = run.rows[static_cast<size_t>(m)];
      // depthwise: X's zero point is taken off before the products (Note [int8 depthwise])
      const int32_t fix = p_.depthwise ? 0
                          : p_.nhwc  ? int8_nhwc_zero_point_term(p_.nhwc_conv, x_zp, m)
                                     : int8_gemm_row_correction(p_.weights[static_cast<size_t>(m / mg)], x_signed, x_zp, m % mg);
      r.ibias = static_cast<int32_t>(static_cast<uint32_t>(r.ibias) + static_cast<uint32_t>(fix));
    }
    if (p_.float_out) return run;
    const int32_t y_zp = p_.has_y_zp ? read_8bit(arg<void>(args, kYZp), p_.y_type, 0) : 0;
    run.y = range_of(p_.y_type, y_zp, p_.relu);
    if (p_.clip) {  // Note [int8 clip]: Q(clip(v, a, b)) = clamp(Q(v), Q(a), Q(b)), Q as QuantizeLinear's
      const float y_scale = arg<float>(args, kYScale)[0];
      auto quantized = [&](float bound) {  // rint(bound / y_scale) + y_zp in Y's range (infinities saturate)
        const float v = std::nearbyint(bound / y_scale) + static_cast<float>(y_zp);
        return static_cast<int32_t>(std::min(std::max(v, static_cast<float>(run.y.lo)), static_cast<float>(run.y.hi)));
      };
      const int32_t lo = quantized(p_.clip_min), hi = quantized(p_.clip_max);
      run.y.lo = std::max(run.y.lo, lo);
      run.y.hi = std::max(run.y.lo, std::min(run.y.hi, hi));  // a Clip past Y's range: every value at its bound
    }
    if (p_.residual) {
      const int32_t r_zp = p_.has_r_zp ? read_8bit(arg<void>(args, kRZp), p_.y_type, 0) : 0;
      const int32_t z_zp = p_.has_z_zp ? read_8bit(arg<void>(args, kZZp), p_.z_type, 0) : 0;
      run.r = range_of(p_.y_type, r_zp, false);
      run.residual = ResidualParams{arg<float>(args, kRScale)[0], arg<float>(args, kZScale)[0], arg<float>(args, kYScale)[0],
                                    r_zp, z_zp};
      run.z = arg<void>(args, kZ);
    }
    return run;
  }

  // Output channel m's n sums -> Y's elements at + j * stride; residual >= 0: z's offset of these (Int8Conv).
  // In chunks, the values in a stack buffer: tiles come from several threads at once.
  void epilogue(const RunParams& run, int64_t m, const int32_t* acc, int64_t n, void* y_base, int64_t at, int64_t stride,
                int64_t residual) const {
    constexpr int64_t kChunk = 64;
    alignas(32) int32_t q[kChunk], zrow[kChunk];
    const RowParams& p = run.rows[static_cast<size_t>(m)];
    if (p_.float_out) {
      int8_epilogue::dequantize(acc, n, p, p_.relu, static_cast<float*>(y_base) + at, stride);
      return;
    }
    uint8_t* y = static_cast<uint8_t*>(y_base) + at;
    const bool bytes = stride == 1 && int8_epilogue::has_byte_epilogues();
    if (residual < 0 && bytes) {
      int8_epilogue::requantize_bytes(acc, n, p, run.y, y);
      return;
    }
    if (residual >= 0 && bytes) {
      int8_epilogue::residual_bytes(acc, n, p, run.r, static_cast<const uint8_t*>(run.z) + residual, p_.z_type == DType::Int8,
                            run.residual, run.y, y);
      return;
    }
    for (int64_t j0 = 0; j0 < n; j0 += kChunk) {
      const int64_t len = std::min(kChunk, n - j0);
      if (residual < 0) {
        requantize(acc + j0, len, p, run.y, q);
      } else {
        requantize(acc + j0, len, p, run.r, q);
        if (p_.z_type == DType::Int8) {
          const int8_t* z = static_cast<const int8_t*>(run.z) + residual + j0;
          for (int64_t j = 0; j < len; ++j) zrow[j] = z[j];
        } else {
          const uint8_t* z = static_cast<const uint8_t*>(run.z) + residual + j0;
          for (int64_t j = 0; j < len; ++j) zrow[j] = z[j];
        }
        add_residual(q, zrow, len, run.residual, run.y);
      }
      uint8_t* out = y + j0 * stride;
      if (stride == 1) {
        for (int64_t j = 0; j < len; ++j) out[j] = static_cast<uint8_t>(q[j]);  // int8 and uint8: the low byte
      } else {
        for (int64_t j = 0; j < len; ++j) out[j * stride] = static_cast<uint8_t>(q[j]);
      }
    }
  }

  template <class T>
  const T* arg(const KernelArgs& args, Slot s) const {
    return static_cast<const T*>(args.inputs[p_.slot[static_cast<size_t>(s)]]);
  }

  Int8Plan p_;
};

bool present(const std::vector<ValueInfo>& inputs, size_t i) { return i < inputs.size() && inputs[i].present; }

const ConstTensor& constant_input(const Node& node, const std::vector<ValueInfo>& inputs, size_t i, const char* what) {
  if (!present(inputs, i) || !inputs[i].constant) {
    node_fail<UnsupportedModelError>(node, std::string(what) + " must be a constant (the int8 weights are packed at plan time)");
  }
  return *inputs[i].constant;
}

bool per_channel(const std::vector<ValueInfo>& inputs, size_t i) {
  return present(inputs, i) && numel(inputs[i].info.shape) > 1;
}

// Int8Conv@NHWC (Note [int8 nhwc conv]): X [N, H, W, C], W [M, kh, kw, C] (the channels_last
// pass's permuted copy), Y and Z channels-last. The pass admits only what the kernel takes
// (int8_conv_fits in runtime/passes/channels_last.cc); a node that breaks it is a bug there.
void plan_nhwc_conv(const Node& node, const std::vector<ValueInfo>& inputs, Int8Plan& p) {
  const Shape& x = inputs[kX].info.shape;
  const Shape& w = inputs[kW].info.shape;
  const ConstTensor& wc = constant_input(node, inputs, kW, "w");
  if (x.size() != 4 || w.size() != 4 || x[3] % 4 != 0 || inputs[kW].info.dtype != DType::Int8) {
    node_fail<InvalidModelError>(node, "the channels-last int8 conv takes 8-bit X [N, H, W, C] with C a multiple of 4 and "
                                       "int8 W [M, kh, kw, C], got X " + inputs[kX].info.str() + " and W " +
                                       inputs[kW].info.str());
  }
  if (present(inputs, kWZp)) {
    const ConstTensor& zp = constant_input(node, inputs, kWZp, "w_zero_point");
    if (std::any_of(zp.data.begin(), zp.data.end(), [](uint8_t b) { return b != 0; })) {
      node_fail<InvalidModelError>(node, "the channels-last int8 conv needs W's zero points 0");
    }
  }
  p.g = int_conv_geometry(node, to_channels_first(x), Shape{w[0], w[3], w[1], w[2]}).expanded_to(3);
  if (p.g.group != 1) node_fail<InvalidModelError>(node, "the channels-last int8 conv takes one group");
  p.nhwc = true;
  p.batch = x[0];
  p.channels = x[3];
  p.filters = w[0];
  Int8NhwcConv& c = p.nhwc_conv;
  c.x_signed = p.x_type == DType::Int8;
  c.batch = x[0];
  c.in_h = x[1];
  c.in_w = x[2];
  c.channels = x[3];
  c.out_h = p.g.output[1];
  c.out_w = p.g.output[2];
  c.filters = w[0];
  c.kh = p.g.kernel[1];
  c.kw = p.g.kernel[2];
  c.stride_h = p.g.strides[1];
  c.stride_w = p.g.strides[2];
  c.dil_h = p.g.dilations[1];
  c.dil_w = p.g.dilations[2];
  c.pad_top = p.g.pads_begin[1];
  c.pad_left = p.g.pads_begin[2];
  pack_int8_nhwc_weights(reinterpret_cast<const int8_t*>(wc.data.data()), c);
}

KernelChoice plan_int8(Base base, const Node& node, const std::vector<ValueInfo>& inputs,
                       const std::vector<TensorInfo>& outputs, const std::array<int, kSlots>* slot = nullptr) {
  Int8Plan p;
  p.base = base;
  if (slot) p.slot = *slot;
  const Shape& x = inputs[kX].info.shape;
  const Shape& w = inputs[kW].info.shape;
  const ConstTensor& wc = constant_input(node, inputs, kW, "w");
  const void* w_zp = present(inputs, kWZp) ? constant_input(node, inputs, kWZp, "w_zero_point").data.data() : nullptr;
  const bool w_signed = inputs[kW].info.dtype == DType::Int8;
  const bool zp_per_row = per_channel(inputs, kWZp);
  p.x_type = inputs[kX].info.dtype;
  p.y_type = outputs[0].dtype;
  p.relu = node.attr_int("relu", 0) != 0;
  p.clip = node.has_attr("clip_min") || node.has_attr("clip_max");
  p.clip_min = node.attr_float("clip_min", -std::numeric_limits<float>::infinity());
  p.clip_max = node.attr_float("clip_max", std::numeric_limits<float>::infinity());
  if (p.clip && !present(inputs, kYScale)) {
    node_fail<InvalidModelError>(node, "clip_min and clip_max bound a quantized output: the layer has no y_scale");
  }
  p.has_bias = present(inputs, kBias);
  p.int_bias = p.has_bias && inputs[kBias].info.dtype == DType::Int32;
  p.bias_scale_per_channel = per_channel(inputs, kBiasScale);
  p.has_bias_scale = present(inputs, kBiasScale);
  p.w_scale_per_channel = per_channel(inputs, kWScale);
  p.residual = present(inputs, kZ);
  p.has_x_zp = present(inputs, kXZp);
  p.has_y_zp = present(inputs, kYZp);
  p.float_out = !present(inputs, kYScale);
  p.bn = present(inputs, kBnMult);
  // with a residual, the step is r's (row_params: out_scale is r_scale), before the Add
  if (p.bn && (base != Base::Conv || !present(inputs, kBnAdd))) {
    node_fail<InvalidModelError>(node, "bn_mult and bn_add go together, on an Int8Conv");
  }
  p.has_r_zp = present(inputs, kRZp);
  p.has_z_zp = present(inputs, kZZp);
  if (p.residual) p.z_type = inputs[kZ].info.dtype;
  const Int8Path path = default_int8_path();
  if (base == Base::Conv && is_channels_last_op(node.op_type)) {
    plan_nhwc_conv(node, inputs, p);
  } else if (base == Base::Conv) {
    p.g = int_conv_geometry(node, x, w).expanded_to(3);
    p.batch = x[0];
    p.channels = x[1];
    p.filters = w[0];
    p.pointwise = p.g.kernel_size() == 1 && p.g.output == p.g.input && p.g.strides == Shape{1, 1, 1} &&
                  p.g.pads_begin == Shape{0, 0, 0};
    p.same_2d = !p.pointwise && x.size() == 4 && p.g.output == p.g.input && p.g.strides == Shape{1, 1, 1} &&
                p.g.dilations == Shape{1, 1, 1};
    const int64_t mg = p.group_filters(), k = p.gemm_k();
    p.depthwise = x.size() == 4 && p.g.group > 1 && p.g.group == p.channels && p.filters == p.channels && k <= 256;
    // the portable path keeps the plain im2col: the oracle the phase planes are tested against
    p.phased = !p.pointwise && !p.same_2d && !p.depthwise && x.size() == 4 && path != Int8Path::Portable &&
               phase_planes_fit(p.g, p.phases);
    p.phase_pointwise = p.phased && p.phases.taps.size() == 1 && p.phases.taps[0].dy == 0 && p.phases.taps[0].dx == 0;
    if (p.depthwise) {  // Note [int8 depthwise]: W minus its zero point, [C][kh * kw]
      p.dw_weights.resize(static_cast<size_t>(p.filters * k));
      for (int64_t m = 0; m < p.filters; ++m) {
        const int32_t zp = w_zp ? read_8bit(w_zp, inputs[kW].info.dtype, zp_per_row ? m : 0) : 0;
        for (int64_t t = 0; t < k; ++t) {
          p.dw_weights[static_cast<size_t>(m * k + t)] =
              static_cast<float>(read_8bit(wc.data.data(), inputs[kW].info.dtype, m * k + t) - zp);
        }
      }
    }
    for (int64_t grp = 0; grp < p.g.group && !p.depthwise; ++grp) {
      const auto* wg = static_cast<const uint8_t*>(wc.data.data()) + grp * mg * k;  // one byte per weight
      const void* zg = w_zp && zp_per_row ? static_cast<const uint8_t*>(w_zp) + grp * mg : w_zp;
      p.weights.push_back(pack_int8_weights(wg, w_signed, mg, k, k, 1, zg, zp_per_row, path));
    }
  } else {
    const bool trans_b = base == Base::Gemm && node.attr_int("transB", 0) != 0;
    p.k = x.back();
    p.rows = numel(x) / p.k;
    p.filters = trans_b ? w[0] : w[1];
    // W's row m (output channel) and column k: [N, K] with transB, else [K, N]
    p.weights.push_back(pack_int8_weights(wc.data.data(), w_signed, p.filters, p.k, trans_b ? p.k : 1,
                                          trans_b ? 1 : p.filters, w_zp, zp_per_row, path));
  }
  p.workers = p.depthwise ? plan_workers(p.batch * p.channels, p.gemm_k() * p.gemm_n())
                          : plan_workers(p.group_filters(), p.gemm_k() * p.gemm_n());
  // A depthwise conv has no GEMM: its direct kernel takes the path's vector forms (AMX's are AVX-512's),
  // and so does the channels-last conv
  const Int8Path used = p.depthwise || p.nhwc ? (path == Int8Path::Amx ? Int8Path::Vnni : path) : p.weights[0].path;
  KernelChoice choice;
  choice.workspace_bytes = p.workspace_bytes();
  std::string algorithm = base == Base::Conv ? (p.nhwc              ? "nhwc " + std::to_string(p.g.kernel[1]) + "x" +
                                                                           std::to_string(p.g.kernel[2]) + " "
                                               : p.pointwise         ? "1x1 "
                                               : p.phase_pointwise ? "1x1 on a phase plane+"
                                               : p.phased          ? "phase planes+im2col+"
                                               : p.depthwise       ? "depthwise "
                                                                   : "im2col+")
                                             : "";
  algorithm += std::string(dtype_name(p.x_type)) + "x" + dtype_name(inputs[kW].info.dtype) +
               (p.depthwise ? " direct (" : p.nhwc ? " tiles (" : " gemm (") + int8_path_name(used) + ")";
  if (p.bn) algorithm += " + batchnorm";
  if (p.residual) algorithm += " + residual add";
  if (p.relu) algorithm += " + relu";
  if (p.clip) algorithm += " + clip";
  choice.algorithm = with_threads(algorithm, p.workers);
  choice.math = p.float_out ? std::string("int8, int32 accumulation, float output")
                            : "int8, int32 accumulation, requantized to " + std::string(dtype_name(p.y_type));
  choice.kernel = std::make_unique<Int8Kernel>(std::move(p));
  return choice;
}

}  // namespace

std::optional<KernelChoice> plan_qlinear_conv_int8(const Node& node, const std::vector<ValueInfo>& inputs,
                                                   const std::vector<TensorInfo>& outputs) {
  // QLinearConv's inputs are Int8Conv's first nine (x, its scale and zero point, w, ..., y's, an
  // int32 bias in the sums' scale): the same kernel, where W and its zero point are constants
  auto constant = [&](size_t i) { return i < inputs.size() && inputs[i].present && inputs[i].constant; };
  const bool w_zp_ok = !(kWZp < inputs.size() && inputs[kWZp].present) || constant(kWZp);
  if (!constant(kW) || !w_zp_ok || inputs[kX].info.shape.size() < 3 || inputs[kX].info.shape.size() > 5) {
    return std::nullopt;
  }
  return plan_int8(Base::Conv, node, inputs, outputs);
}

std::optional<KernelChoice> plan_qgemm_int8(const Node& node, const std::vector<ValueInfo>& inputs,
                                            const std::vector<TensorInfo>& outputs) {
  // QGemm: A, a_scale, a_zp, B, b_scale, b_zp, C?, y_scale?, y_zp? (no y_scale: a float output);
  // Int8Gemm's slots in that order, where B and its zero point are constants, alpha 1, no transA,
  // and C (int32, in the sums' scale) is one value per output column.
  auto has = [&](size_t i) { return i < inputs.size() && inputs[i].present; };
  if (node.attr_float("alpha", 1.0f) != 1.0f || node.attr_int("transA", 0) != 0 || !has(3) || !inputs[3].constant ||
      inputs[3].info.shape.size() != 2 || inputs[0].info.shape.size() != 2 || (has(5) && !inputs[5].constant)) {
    return std::nullopt;
  }
  const int64_t n = node.attr_int("transB", 0) != 0 ? inputs[3].info.shape[0] : inputs[3].info.shape[1];
  if (has(6)) {
    const Shape& c = inputs[6].info.shape;
    if (numel(c) != n || c.empty() || c.back() != n) return std::nullopt;
  }
  std::array<int, kSlots> slot{};
  slot.fill(-1);
  const int order[] = {0, 1, 2, 3, 4, 5, 7, 8, 6};  // x .. w_zp, y_scale, y_zp, bias
  std::vector<ValueInfo> mapped(kBiasScale + 1);
  for (int s = 0; s <= kBias; ++s) {
    const size_t from = static_cast<size_t>(order[s]);
    slot[static_cast<size_t>(s)] = order[s];
    if (from < inputs.size()) mapped[static_cast<size_t>(s)] = inputs[from];
    else mapped[static_cast<size_t>(s)].present = false;
  }
  mapped[kBiasScale].present = false;
  if (!mapped[kYScale].present) mapped[kYZp].present = false;
  return plan_int8(Base::Gemm, node, mapped, outputs, &slot);
}

void register_cpu_qdq_int8_kernels(KernelRegistry& r) {
  r.add("Int8Conv", [](const Node& n, const std::vector<ValueInfo>& i, const std::vector<TensorInfo>& o) {
     return plan_int8(Base::Conv, n, i, o);
   }).with_dtypes(int8_types());
  // Note [int8 nhwc conv]: the pass asks this before it makes a conv channels-last
  r.add(std::string("Int8Conv") + kChannelsLastSuffix,
        [](const Node& n, const std::vector<ValueInfo>& i, const std::vector<TensorInfo>& o) {
          return plan_int8(Base::Conv, n, i, o);
        })
      .with_dtypes(int8_types())
      .refusing([](const Node& n) -> std::string {
        if (!int8_nhwc_conv_available()) return "the channels-last int8 conv needs AVX-512 VNNI (and the int8 path on it)";
        if (n.attr_int("group", 1) != 1) return "the channels-last int8 conv takes one group";
        return "";
      });
  r.add("Int8Gemm", [](const Node& n, const std::vector<ValueInfo>& i, const std::vector<TensorInfo>& o) {
     return plan_int8(Base::Gemm, n, i, o);
   }).with_dtypes(int8_types());
  r.add("Int8MatMul", [](const Node& n, const std::vector<ValueInfo>& i, const std::vector<TensorInfo>& o) {
     return plan_int8(Base::MatMul, n, i, o);
   }).with_dtypes(int8_types());
}

}  // namespace dnnx
