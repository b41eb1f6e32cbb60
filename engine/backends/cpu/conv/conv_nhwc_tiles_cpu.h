// The tile kernels of the channels-last convs (Note [channels-last conv on the cpu] in
// conv_nhwc_cpu.cc). Both read X [N, H, W, C] through a pointer table: for a strip of P output
// pixels, rows[t * P + p] is the input row (C floats) that tap t of pixel p reads, or a row of
// zeros where the tap falls in the padding. So strides, pads, dilations and strips that cross
// output rows or images are all the same loop, and nothing is unrolled into a col buffer.
//
// Note [packed nhwc filter]: the dense tile computes a [P pixels, 16 V filters] block of Y as
// broadcast-times-vector FMAs: per tap and channel it loads V filter vectors and broadcasts P
// input values, into P x V accumulators (8x1, 8x2, 8x3 or 6x4: at most 24 of the 32 AVX-512
// registers, and P + 4 pointers in general registers). The filter is packed once, at plan time,
// as [channel block][panel][tap][channel][16 V] with zeros past K: a panel's channel block
// (taps x block channels x 16 V floats) is one stream that stays in L2 (<= 128 KiB) while the
// strips of a pixel range pass over it, read 4 KiB ahead into L1 (Note [filter prefetch]
// in conv_nhwc_tiles_cpu.cc). Channel blocks are summed into Y in block order, and the
// epilogue (bias, residual, Relu) runs with the last one: every output is the same sum in the
// same order whatever the thread split, so results do not depend on the thread count.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace dnnx {

constexpr int64_t kDepthwiseChannels = 64;  // channels per depthwise strip

// The dense tile's shape and the filter's blocking for one group of a conv.
struct NhwcTileShape {
  int64_t filters = 0;   // Kg
  int64_t channels = 0;  // Cg
  int64_t taps = 1;      // R * S
  int vectors = 4;       // V: a panel is 16 V filters
  int pixels = 6;        // P: pixels per strip
  int64_t block = 0;     // channels per block

  int64_t panel_width() const { return 16 * vectors; }
  int64_t panels() const { return (filters + panel_width() - 1) / panel_width(); }
  int64_t blocks() const { return (channels + block - 1) / block; }
  int64_t block_channels(int64_t b) const { return std::min(block, channels - b * block); }
  // Where panel j of channel block b starts in the packed filter.
  int64_t panel_offset(int64_t b, int64_t j) const {
    return (b * block * panels() + j * block_channels(b)) * taps * panel_width();
  }
  int64_t packed_size() const { return channels * taps * panels() * panel_width(); }
};

// The tile for Kg filters over Cg channels and `taps` taps: the V (1 to 4) that pads Kg least
// (the wider on a tie), its P (8, or 6 at V = 4; `rows`, the output pixels there are, where
// they are at most half of that: Note [short strips]), and channel blocks that keep a panel's
// block in L2. On the AVX2 tiles V is 1 and P 6 (Note [avx2 tiles]).
//
// Note [short strips]: a strip of P pixels costs P broadcasts and P x V FMAs per channel
// whatever the pixels it has, so a product or conv whose output rows would leave at least half
// a strip idle (Faster R-CNN's fc6 on its 3 proposals, a squeeze-and-excitation conv's one
// pixel) runs a tile of that many:
// fc6, [3 x 12544] x [12544 x 1024], 4.0 -> 3.4 ms, its 51 MB filter streamed with fewer
// instructions in the way (1 thread, this Xeon); [3 x 1280] x [1280 x 1000] the same 0.21 ms.
// Each output is the same sum in the same order as in a full strip (tests/test_short_strips_cpu.py).
//
// Note [tail strips]: the last strip of a call, of m % P pixels, runs on a tile of that many
// pixels (reading the strip's pointer table as it is, P entries a tap): a full strip there cost
// P pixels' work for the few it had. ResNet-50's 7x7 layers have 49 pixels, 8 strips of 6 and
// one of 1 (10% of their multiply-adds on padding): 512 -> 2048 with the residual 1.007 -> 0.937
// ms, 2048 -> 512 0.986 -> 0.915 (1 thread, one conv a model, medians of 5 alternating runs,
// this 2-core EPYC). Each pixel's sums are those of a full strip: the same bits.
NhwcTileShape nhwc_tile_shape(int64_t filters, int64_t channels, int64_t taps, int64_t rows = 8);

// w [Kg, taps, Cg] (the channels-last filter of one group) -> packed (Note [packed nhwc filter]).
void pack_nhwc_filter(const NhwcTileShape& s, const float* w, float* packed);

// What a tile does to its outputs after the last channel block, in the unfused ops' order:
// y = clamp((sum + bias) + residual) with clamp(v) = min(max(v, lo), hi) (Relu: lo 0, hi +inf;
// Clip's bounds; NaN passes through, as Relu's and Clip's kernels let it). bias is at the tile's
// first filter; residual has Y's layout and is at the tile's first element.
struct NhwcEpilogue {
  const float* bias = nullptr;
  const float* residual = nullptr;
  bool clamp = false;
  float lo = 0.0f, hi = 0.0f;
};

// The scalar epilogue's clamp (the portable tiles and row tails): NaN passes through.
inline float clamped(float v, const NhwcEpilogue& e) {
  if (!e.clamp) return v;
  v = v < e.lo ? e.lo : v;
  return v > e.hi ? e.hi : v;
}

// The dense tiles of m pixels, in strips of P (strip s's table at rows + s * taps * P, one call
// for them all: the per-call setup once): y[p, j] (+)= sum over t < taps, c < cn of
// rows[t * P + p][c0 + c] * w[(t * cn + c) * 16 V + j], for p < m and j < n; `accumulate` adds to
// y (a later channel block), `last` applies e. y's and the residual's rows are ldc apart.
void nhwc_dense_tile(const NhwcTileShape& s, const float* const* rows, int64_t c0, int64_t cn, const float* w,
                     float* y, int64_t ldc, int64_t m, int64_t n, bool accumulate, bool last, const NhwcEpilogue& e);

// The depthwise strip (one channel per group, K = C): m output pixels of one output row (in
// strips of 6 or 8 within the call), channels [c0, c0 + n) (n <= 64), every pixel reading the same
// window taps: rows[kh] is X's input row (C floats per column) of window row kh, or null in the
// padding; columns kw in [kw_lo, kw_hi) are inside X for every pixel, pixel p's tap kw at column
// iw0 + p * sw + kw * dw. y[p, c] = epilogue(sum over the taps, in order, of x * w[(kh * S + kw)
// * C + c]); y rows are C apart.
struct DepthwiseStrip {
  const float* const* rows;
  int64_t window_rows, window_cols;  // R, S
  int64_t kw_lo, kw_hi;
  int64_t iw0, sw, dw, channels;  // channels: C, X's and Y's row length
};
void nhwc_depthwise_strip(const DepthwiseStrip& s, int64_t c0, int64_t n, const float* w, float* y, int64_t m,
                          const NhwcEpilogue& e);

// One window row of a gathered row (Note [gathered rows] in conv_nhwc_cpu.cc): out[0, lead) = 0,
// out[lead, lead + n) = in[0, n), out[lead + n, total) = 0; masked AVX-512 moves where the tiles
// run on AVX-512 (a 3x3 stem's row is 9 floats: one load and one store, not 9 of each).
void nhwc_gather_run(const float* in, float* out, int64_t lead, int64_t n, int64_t total);

// The gathered rows of `count` pixels whose windows lie inside X along one output row (Note
// [interior gather] in conv_nhwc_cpu.cc): out[p * out_stride + i * run + f] = in[i][p * step + f]
// for p < count, i < window_rows (X's input row of window row i, at the first pixel's first
// tap) and f < run (the S x C floats of a window row).
void nhwc_gather_window(const float* const* in, int64_t window_rows, int64_t run, int64_t step, int64_t count,
                        float* out, int64_t out_stride);

// The tiles' instruction set here (Note [tile paths] in conv_nhwc_tiles_cpu.cc): "avx512",
// "avx2" (Note [avx2 tiles]: 6 x 16 dense tiles) or "portable" (plain loops of the same sums);
// DNNX_CONV_NHWC=avx2 or =portable forces one, so tests cover each.
std::string nhwc_tile_path();
bool nhwc_tiles_have_avx512();
bool nhwc_tiles_have_avx2();
bool nhwc_tiles_vectorized();  // AVX-512 or AVX2: the channels-last path pays off

}  // namespace dnnx
