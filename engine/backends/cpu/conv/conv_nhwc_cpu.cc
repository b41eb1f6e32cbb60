// Note [channels-last conv on the cpu]
// onnxruntime's CPU convolutions (MLAS) keep activations channel-blocked between layers, and were
// 1.5-2.4x faster than dnnx's NCHW OpenBLAS path on MobileNet's 1x1 convs and 2-17x on its
// depthwise ones (bench/RESULTS.md: the same layers in oneDNN's blocked layout). OpenBLAS packs
// both operands on every call, and a depthwise plane of 7x7 or 14x14 costs more in setup than in
// multiply-adds. So on a CPU with AVX-512, or AVX2 and FMA (Note [avx2 tiles]), the CPU backend
// asks for the channels_last pass (Note
// [channels last] in runtime/passes/channels_last.cc): the 2-D convs and pools run on
// [N, H, W, C] data with these kernels, and the graph's elementwise ops, residual Adds,
// squeeze-and-excitation gates and channel Concats stay channels-last between them
// (Note [channels-last forms]).
// - "Conv@NHWC" of one group (and each group of a grouped conv): an implicit GEMM,
//   Y [pixels, K] = rows x W^T, with the filter packed once at plan time (Note [packed nhwc
//   filter] in conv_nhwc_tiles_cpu.h) and X read in place through a pointer table per strip of
//   output pixels: no im2col, no per-call packing of either operand.
// - A depthwise conv (one channel per group, K = C): each output pixel's 64-channel vectors sum
//   their taps' input vectors times the tap's filter vectors, strips of 6 pixels at a time.
// - The fusions of the NCHW kernels (bias, Relu, the residual Add, Clip, HardSwish, Swish) run
//   on the same tiles: bias, residual and Relu in the tile's store, the activations over each
//   item's rows right after (Note [conv activation epilogue]).
// Work is split into items (a range of pixel strips x a range of filter panels or channels),
// each output computed by one item in a fixed order: results do not depend on the thread count.
#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

#include "backends/cpu/conv/conv_nhwc_cpu.h"

#include "backends/cpu/conv/conv_activation_cpu.h"
#include "backends/cpu/conv/conv_nhwc_depthwise_walk_cpu.h"
#include "backends/cpu/conv/conv_nhwc_one_channel_cpu.h"
#include "backends/cpu/conv/conv_nhwc_tiles_cpu.h"
#include "backends/cpu/conv/conv_winograd_nhwc_cpu.h"
#include "backends/cpu/runtime/thread_pool.h"
#include "ops/conv/conv_geometry.h"
#include "ops/layout/channels_last.h"
#include "runtime/mutable_constants.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

constexpr size_t kResidualInput = 3;  // Conv+Add+Relu's z
constexpr int64_t kInteriorWindowRows = 16;  // Note [interior gather]: windows of at most this many rows
constexpr int64_t kStripsPerItem = 32;  // an item's pixels: 192-256 (its input rows stay in L2)

enum class NhwcFusion { None, Relu, AddRelu };

// Note [strip items]: the strip items of a conv's output pixels, at least 1: ranges of at most
// kStripsPerItem strips of `pixels`, at least one per thread where there are strips enough, all
// of one size but the last. A conv of 14x14 output pixels had two items of 192 and 4 pixels, and
// with one filter panel ran on one thread (MobileNetV2's 384 -> 64 projections: 0.061 ms on 1
// thread, 0.074 on 2). Where an item's strips end changes no sum: each pixel's is its own.
int64_t strip_items_for(const NhwcConv& g, int pixels) {
  const int64_t strips = (g.pixels() + pixels - 1) / pixels;
  const int64_t threads = cpu_threads();
  const int64_t items = (strips + kStripsPerItem - 1) / kStripsPerItem;
  const int64_t whole_rounds = std::min(strips, (items + threads - 1) / threads * threads);  // Note [item rounds]
  return std::max<int64_t>({1, whole_rounds, std::min<int64_t>(strips, threads)});
}

// Note [item rounds]: the strip items are a multiple of the threads (where there are strips
// enough): items of kStripsPerItem strips left the last round with one item for two threads. FCN
// ResNet-50's 28x28 layers (131 strips) had 5 items, 3 on one thread and 2 on the other, 20% over
// an even split; 6 items of 22 strips: 3x3 512 -> 512 at dilation 4 19.7 -> 16.9 ms, 1x1
// 1024 -> 2048 17.6 -> 15.0, 2048 -> 512 8.6 -> 7.4 (2 threads, one conv a model, medians of 3
// alternating runs, this 2-core EPYC; onnxruntime's 15.5, 14.7, 7.4 in its own profile). At one
// thread nothing changes. Items end where they may: each pixel's sums are its own.

// The strips of every strip item but the last.
int64_t strips_per_item_for(const NhwcConv& g, int pixels) {
  const int64_t strips = (g.pixels() + pixels - 1) / pixels;
  return std::max<int64_t>(1, (strips + strip_items_for(g, pixels) - 1) / strip_items_for(g, pixels));
}


// The tile epilogue's clamp: Relu's (the +Relu fusions) or Clip's (Conv+Clip), else none.
NhwcEpilogue clamp_of(NhwcFusion fusion, const ConvActivation& act) {
  NhwcEpilogue e;
  if (act.kind == ConvActivationKind::Clip) {
    e.clamp = true, e.lo = act.lo, e.hi = act.hi;
  } else if (fusion != NhwcFusion::None) {
    e.clamp = true, e.lo = 0.0f, e.hi = std::numeric_limits<float>::infinity();
  }
  return e;
}

// The pointer tables of the strips of pixels [q0, q1): strip s's at table + s * taps * P, entry
// t * P + p the input row tap t of pixel q0 + s * P + p reads (zeros past q1 or in the padding);
// tap t = (depth tap * R + kh) * S + kw. The pixel's position is stepped, not divided out per
// strip (a 1x1 conv of 16 channels spent more on the divisions than on its multiply-adds), and
// a 1x1 unit-stride unpadded conv's rows are X's rows in order.
void strip_rows(const NhwcConv& g, const float* x, const float* zeros, int64_t q0, int64_t q1, int pixels,
                const float** table) {
  const int64_t count = (q1 - q0 + pixels - 1) / pixels * pixels;  // whole strips
  const bool pointwise = g.taps() == 1 && g.sd == 1 && g.sh == 1 && g.sw == 1 && g.pd == 0 && g.ph == 0 && g.pw == 0;
  if (pointwise) {  // then X [.., C] and Y [.., K] have the same pixels
    for (int64_t i = 0; i < count; ++i) table[i] = q0 + i < q1 ? x + (q0 + i) * g.c : zeros;
    return;
  }
  int64_t col = q0 % g.ow, row = q0 / g.ow % g.oh, depth = q0 / (g.ow * g.oh) % g.od, image = q0 / (g.ow * g.oh * g.od);
  for (int64_t i = 0; i < count; ++i, ++col) {
    const float** strip = table + i / pixels * pixels * g.taps();
    const int p = static_cast<int>(i % pixels);
    if (q0 + i >= q1) {
      for (int64_t t = 0; t < g.taps(); ++t) strip[t * pixels + p] = zeros;
      continue;
    }
    if (col == g.ow) col = 0, ++row;
    if (row == g.oh) row = 0, ++depth;
    if (depth == g.od) depth = 0, ++image;
    const float* img = x + image * g.d * g.h * g.w * g.c;
    const int64_t id0 = depth * g.sd - g.pd, ih0 = row * g.sh - g.ph, iw0 = col * g.sw - g.pw;
    // A whole strip in one output row with every tap inside X: tap t of pixel p is tap t of the
    // strip's first pixel, p * SW pixels on (a stem's 9 taps: no bounds to test per entry).
    if (p == 0 && q0 + i + pixels <= q1 && col + pixels <= g.ow && id0 >= 0 && id0 + (g.rd - 1) * g.dd < g.d &&
        ih0 >= 0 && ih0 + (g.r - 1) * g.dh < g.h && iw0 >= 0 && iw0 + (pixels - 1) * g.sw + (g.s - 1) * g.dw < g.w) {
      const int64_t step = g.sw * g.c;
      for (int64_t kd = 0; kd < g.rd; ++kd) {
        for (int64_t kh = 0; kh < g.r; ++kh) {
          const float* in_row = img + ((id0 + kd * g.dd) * g.h + ih0 + kh * g.dh) * g.w * g.c;
          for (int64_t kw = 0; kw < g.s; ++kw) {
            const float* first = in_row + (iw0 + kw * g.dw) * g.c;
            const float** entries = strip + ((kd * g.r + kh) * g.s + kw) * pixels;
            for (int e = 0; e < pixels; ++e) entries[e] = first + e * step;
          }
        }
      }
      i += pixels - 1, col += pixels - 1;
      continue;
    }
    for (int64_t kd = 0; kd < g.rd; ++kd) {
      const int64_t id = id0 + kd * g.dd;
      for (int64_t kh = 0; kh < g.r; ++kh) {
        const int64_t ih = ih0 + kh * g.dh;
        const bool rows_inside = id >= 0 && id < g.d && ih >= 0 && ih < g.h;
        const float* in_row = rows_inside ? img + (id * g.h + ih) * g.w * g.c : nullptr;
        for (int64_t kw = 0; kw < g.s; ++kw) {
          const int64_t iw = iw0 + kw * g.dw;
          const bool inside = rows_inside && iw >= 0 && iw < g.w;
          strip[((kd * g.r + kh) * g.s + kw) * pixels + p] = inside ? in_row + iw * g.c : zeros;
        }
      }
    }
  }
}

// A short copy as a plain loop: std::copy of a few floats is a memmove call, and a gathered stem
// row is 5 to 21 floats (Note [gathered rows]).
inline void copy_floats(const float* from, float* to, int64_t n) {
  for (int64_t i = 0; i < n; ++i) to[i] = from[i];
}

// A conv of one or more groups of several channels: the packed implicit GEMM per group. Work items
// are (a range of kStripsPerItem strips of P output pixels) x (a range of columns: filter panels,
// column c being panel c % panels of group c / panels).
class DenseNhwcKernel final : public Kernel {
 public:
  // shape: the tiles for Kg filters over Cg channels and the conv's taps, or (gathered, Note
  // [gathered rows]) over taps x Cg channels and one tap.
  DenseNhwcKernel(NhwcConv g, NhwcTileShape shape, int64_t column_items, NhwcFusion fusion, ConvActivation act,
                  bool has_bias, int workers, const float* constant_filter)
      : g_(g), shape_(shape), pixels_(shape.pixels), gathered_(shape.taps != g.taps()),
        zeros_(static_cast<size_t>(std::max<int64_t>(g.c, 1)), 0.0f),
        strips_per_item_(strips_per_item_for(g, shape.pixels)), strip_items_(strip_items_for(g, shape.pixels)),
        columns_(g.group * shape.panels()), column_items_(column_items),
        columns_first_(g.group * shape.packed_size() > g.n * g.d * g.h * g.w * g.c + g.pixels() * g.k),
        fusion_(fusion), act_(act), has_bias_(has_bias), workers_(workers) {
    // the output columns whose window is inside X along W: [inner_lo_, inner_hi_)
    inner_lo_ = std::min(g.ow, (g.pw + g.sw - 1) / g.sw);
    const int64_t last = g.w - 1 - (g.s - 1) * g.dw + g.pw;  // ow * sw <= last
    inner_hi_ = last < 0 ? inner_lo_ : std::max(inner_lo_, std::min(g.ow, last / g.sw + 1));
    if (constant_filter) {
      packed_.resize(static_cast<size_t>(g.group * shape.packed_size()));
      pack(constant_filter, packed_.data());
    }
  }

  void run(const KernelArgs& args) const override {
    const float* w = filter(args);
    char* tables = static_cast<char*>(args.workspace) + pack_bytes();
    cpu_thread_pool().parallel_for(strip_items_ * column_items_, [&](int64_t begin, int64_t end, int worker) {
      const float** table = reinterpret_cast<const float**>(tables + worker * table_bytes());
      for (int64_t item = begin; item < end; ++item) run_item(args, w, item, table);
    }, workers_);
  }

  // The workspace: the packed filter of a filter that is not a constant, then one table per worker.
  size_t workspace_bytes() const { return pack_bytes() + workers_ * table_bytes(); }

 private:
  struct Item {
    int64_t q0, q1;      // output pixels
    int64_t col0, col1;  // columns
  };

  size_t pack_bytes() const {
    return packed_.empty() ? static_cast<size_t>(g_.group * shape_.packed_size()) * sizeof(float) : 0;
  }
  // A worker's scratch: the pointer table of an item's strips, then (gathered) its gathered rows.
  // (sized for kStripsPerItem strips, the most an item has: Note [strip items])
  size_t pointer_bytes() const { return static_cast<size_t>(kStripsPerItem * pixels_ * g_.taps()) * sizeof(float*); }
  size_t table_bytes() const {
    const size_t rows = gathered_ ? static_cast<size_t>(kStripsPerItem * pixels_ * shape_.channels) : 0;
    return pointer_bytes() + rows * sizeof(float);
  }

  void pack(const float* w, float* out) const {  // w [K, R, S, Cg]: group gi's filters are rows gi*Kg..
    const int64_t per_group = shape_.filters * shape_.taps * shape_.channels;
    for (int64_t gi = 0; gi < g_.group; ++gi) pack_nhwc_filter(shape_, w + gi * per_group, out + gi * shape_.packed_size());
  }

  // The packed filter: the constant's, packed at plan time, or input 1 packed into the workspace.
  const float* filter(const KernelArgs& args) const {
    if (!packed_.empty()) return packed_.data();
    float* out = static_cast<float*>(args.workspace);
    pack(args.in(1), out);
    return out;
  }

  Item item_at(int64_t item) const {
    // Note [column-major items]: where the filter outweighs X and Y, a worker's block of items is
    // a range of columns first
    const int64_t strip_item = columns_first_ ? item % strip_items_ : item / column_items_;
    const int64_t column_item = columns_first_ ? item / strip_items_ : item % column_items_;
    const int64_t span = pixels_ * strips_per_item_;
    Item it;
    it.q0 = strip_item * span;
    it.q1 = std::min(g_.pixels(), it.q0 + span);
    it.col0 = column_item * columns_ / column_items_;
    it.col1 = (column_item + 1) * columns_ / column_items_;
    return it;
  }

  // The filters (Y's columns) of the item's columns: [begin, end).
  std::pair<int64_t, int64_t> filter_range(const Item& it) const {
    const int64_t panels = shape_.panels(), nr = shape_.panel_width();
    auto at = [&](int64_t col) { return (col / panels) * shape_.filters + std::min(shape_.filters, (col % panels) * nr); };
    const int64_t last = it.col1 - 1;
    return {at(it.col0), (last / panels) * shape_.filters + std::min(shape_.filters, (last % panels + 1) * nr)};
  }

  NhwcEpilogue epilogue(const KernelArgs& args, int64_t q, int64_t filter) const {
    NhwcEpilogue e = clamp_of(fusion_, act_);
    e.bias = has_bias_ ? args.in(2) + filter : nullptr;
    e.residual = fusion_ == NhwcFusion::AddRelu ? args.in(kResidualInput) + q * g_.k + filter : nullptr;
    return e;
  }

  void run_item(const KernelArgs& args, const float* w, int64_t index, const float** table) const {
    const Item it = item_at(index);
    if (it.q0 >= it.q1 || it.col0 >= it.col1) return;
    if (gathered_) {
      gather(args.in(0), it, table);
    } else {
      strip_rows(g_, args.in(0), zeros_.data(), it.q0, it.q1, pixels_, table);
    }
    run_columns(args, w, it, table);
    if (act_.kind == ConvActivationKind::None || act_.kind == ConvActivationKind::Clip) return;  // Clip: in the tile
    const auto [f0, f1] = filter_range(it);
    float* y = args.out(0);
    if (f0 == 0 && f1 == g_.k) {  // the item's rows are one contiguous run
      apply_conv_activation(act_, y + it.q0 * g_.k, (it.q1 - it.q0) * g_.k);
      return;
    }
    for (int64_t q = it.q0; q < it.q1; ++q) apply_conv_activation(act_, y + q * g_.k + f0, f1 - f0);
  }

  // Note [gathered rows]: a conv of few channels (a stem's 3 over 7x7 taps) runs 3 multiply-adds
  // per tap between the tile's pointer loads. So each pixel's taps are first copied into one row of
  // taps x C floats (zeros for the padding), and the tile runs one tap over taps x C channels:
  // the filter [K, R, S, C] is already [K, R * S * C]. The rows are copied from X's geometry, a
  // window row (depth and row) at a time, its taps inside X along W one run of floats at unit
  // dilation: no pointer table (one of taps x P entries a strip cost more than the copies and
  // the tile together: speech_gru's Cin = 1 11x11 stem, 121 taps, 0.52 -> 0.17 ms).
  void gather(const float* x, const Item& it, const float** table) const {
    const int64_t row = shape_.channels, run = g_.s * g_.c;
    float* rows = reinterpret_cast<float*>(reinterpret_cast<char*>(table) + pointer_bytes());
    const int64_t count = (it.q1 - it.q0 + pixels_ - 1) / pixels_ * pixels_;  // whole strips
    const float* window[kInteriorWindowRows];  // Note [interior gather]
    // pixel it.q0's output column, row, depth and image, then stepped (no division per pixel)
    int64_t col = it.q0 % g_.ow, oh = it.q0 / g_.ow % g_.oh, od = it.q0 / (g_.ow * g_.oh) % g_.od;
    int64_t image = it.q0 / (g_.ow * g_.oh * g_.od);
    for (int64_t i = 0; i < count; ++i, ++col) {
      float* dst = rows + i * row;
      table[i] = dst;  // strip s's rows at s * P
      if (it.q0 + i >= it.q1) {
        std::fill(dst, dst + row, 0.0f);
        continue;
      }
      if (col == g_.ow) col = 0, ++oh;
      if (oh == g_.oh) oh = 0, ++od;
      if (od == g_.od) od = 0, ++image;
      const float* img = x + image * g_.d * g_.h * g_.w * g_.c;
      const int64_t iw0 = col * g_.sw - g_.pw;
      const int64_t interior = interior_run(img, col, oh, od, it.q1 - (it.q0 + i), window);
      if (interior > 0) {  // Note [interior gather]
        nhwc_gather_window(window, g_.window_rows(), run, g_.sw * g_.c, interior, dst, row);
        for (int64_t p = 1; p < interior; ++p) table[i + p] = dst + p * row;
        i += interior - 1, col += interior - 1;
        continue;
      }
      int64_t lo = 0, hi = g_.s;  // the taps inside X along W: [lo, hi)
      while (lo < hi && iw0 + lo * g_.dw < 0) ++lo;
      while (hi > lo && iw0 + (hi - 1) * g_.dw >= g_.w) --hi;
      for (int64_t kd = 0; kd < g_.rd; ++kd) {
        const int64_t id = od * g_.sd - g_.pd + kd * g_.dd;
        for (int64_t kh = 0; kh < g_.r; ++kh) {
          const int64_t ih = oh * g_.sh - g_.ph + kh * g_.dh;
          float* out = dst + (kd * g_.r + kh) * run;
          if (id < 0 || id >= g_.d || ih < 0 || ih >= g_.h || lo >= hi) {
            std::fill(out, out + run, 0.0f);
            continue;
          }
          const float* in = img + (id * g_.h + ih) * g_.w * g_.c;
          if (g_.dw == 1) {
            nhwc_gather_run(in + (iw0 + lo) * g_.c, out, lo * g_.c, (hi - lo) * g_.c, run);
            continue;
          }
          std::fill(out, out + lo * g_.c, 0.0f);
          for (int64_t kw = lo; kw < hi; ++kw) copy_floats(in + (iw0 + kw * g_.dw) * g_.c, out + kw * g_.c, g_.c);
          std::fill(out + hi * g_.c, out + run, 0.0f);
        }
      }
    }
  }

  // Note [interior gather]: the stem's gathered rows (7 window rows of 21 floats a pixel at
  // 224x224x3 -> 112x112) were copied one window row per call, its lanes' masks worked out each
  // time: 0.86 of the stem's 3.0 ms (its tiles 2.2; onnxruntime's whole conv 2.17, this 2-core
  // EPYC, 1 thread). The pixels of an output row whose windows lie inside X (unit dilation along
  // W) read each window row as one run of S x C floats that moves SW x C floats a pixel, so they
  // are copied in one call per run of such pixels: the window's input rows found once, the
  // tail's mask once. The stem 3.0 -> 2.4 ms (1 thread). The same floats land in the same places:
  // no sum moves (tests/test_conv_channels_last_cpu.py: the gathered cases, 1 and 2 threads).
  // The pixels from (col, oh, od) on, at most `left`, whose windows lie inside X, with
  // window[i] = X's row of window row i at the first one's first tap; 0 if that pixel's isn't.
  int64_t interior_run(const float* img, int64_t col, int64_t oh, int64_t od, int64_t left, const float** window) const {
    if (g_.dw != 1 || g_.window_rows() > kInteriorWindowRows || col < inner_lo_ || col >= inner_hi_) return 0;
    for (int64_t kd = 0; kd < g_.rd; ++kd) {
      const int64_t id = od * g_.sd - g_.pd + kd * g_.dd;
      if (id < 0 || id >= g_.d) return 0;
      for (int64_t kh = 0; kh < g_.r; ++kh) {
        const int64_t ih = oh * g_.sh - g_.ph + kh * g_.dh;
        if (ih < 0 || ih >= g_.h) return 0;
        window[kd * g_.r + kh] = img + ((id * g_.h + ih) * g_.w + col * g_.sw - g_.pw) * g_.c;
      }
    }
    return std::min(left, inner_hi_ - col);
  }

  void run_columns(const KernelArgs& args, const float* w, const Item& it, const float** table) const {
    const int64_t panels = shape_.panels(), nr = shape_.panel_width(), kg = shape_.filters;
    const int64_t blocks = std::max<int64_t>(1, shape_.blocks());
    float* y = args.out(0);
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t cn = shape_.blocks() ? shape_.block_channels(b) : 0;
      for (int64_t col = it.col0; col < it.col1; ++col) {
        const int64_t gi = col / panels, j = col % panels, filter = gi * kg + j * nr;
        const float* wp = w + gi * shape_.packed_size() + (cn ? shape_.panel_offset(b, j) : 0);
        const int64_t c0 = gi * shape_.channels + b * shape_.block, n = std::min(nr, kg - j * nr);
        nhwc_dense_tile(shape_, table, c0, cn, wp, y + it.q0 * g_.k + filter, g_.k, it.q1 - it.q0, n, b > 0,
                        b == blocks - 1, epilogue(args, it.q0, filter));
      }
    }
  }

  NhwcConv g_;
  NhwcTileShape shape_;
  int pixels_;                 // P
  bool gathered_;              // Note [gathered rows]
  std::vector<float> zeros_;   // the row a padding tap reads
  int64_t strips_per_item_, strip_items_, columns_, column_items_;  // Note [strip items]
  int64_t inner_lo_ = 0, inner_hi_ = 0;  // Note [interior gather]
  bool columns_first_;                     // Note [column-major items]
  NhwcFusion fusion_;
  ConvActivation act_;
  bool has_bias_;
  int workers_;
  std::vector<float> packed_;  // the constant filter, packed per group (empty: packed per call)
};

// Note [gathered rows]: the tiles for a conv of one group with fewer channels than this and at
// least kGatherFromTaps taps run over gathered rows. (A 3x3 stem of 3 channels measured slower
// gathered, 0.66-0.69 against 0.47-0.49 ms at 224x224 -> 32 filters; the 7x7 one 3.6-7.3 against
// 6.9-7.0 ms, on a loaded 2-core machine. Again with the stepped tables of strip_rows and the
// copies of gather: the 3x3 one 0.55 gathered against 0.28 ms, at 320x320 -> 16 filters 0.96
// against 0.39.) One channel takes neither: Note [one-channel nhwc conv].
constexpr int64_t kGatherBelowChannels = 16;
constexpr int64_t kGatherFromTaps = 25;

NhwcTileShape dense_shape(const NhwcConv& g) {
  if (g.group == 1 && g.c < kGatherBelowChannels && g.taps() >= kGatherFromTaps) {
    return nhwc_tile_shape(g.k, g.taps() * g.c, 1, g.pixels());
  }
  return nhwc_tile_shape(g.group_filters(), g.group_channels(), g.taps(), g.pixels());
}

// One channel per group, K = C (Note [channels-last conv on the cpu]): items are output rows x
// ranges of 64-channel blocks; per row, the window rows' input rows are found once, the pixels
// whose window lies inside X run in strips, and the few at the borders one at a time with
// their own column taps; or the whole row walks, borders included (Note [depthwise row walk]). The filter [C, R, S, 1] is packed as [R * S, C].
class DepthwiseNhwcKernel final : public Kernel {
 public:
  DepthwiseNhwcKernel(NhwcConv g, NhwcFusion fusion, ConvActivation act, bool has_bias, const float* constant_filter)
      : g_(g), fusion_(fusion), act_(act), has_bias_(has_bias),
        blocks_((g.c + kDepthwiseChannels - 1) / kDepthwiseChannels) {
    // the output columns whose whole window is inside X: [inner_lo_, inner_hi_)
    inner_lo_ = std::min(g.ow, (g.pw + g.sw - 1) / g.sw);
    const int64_t last = g.w - 1 - (g.s - 1) * g.dw + g.pw;  // ow * sw <= last
    inner_hi_ = last < 0 ? inner_lo_ : std::max(inner_lo_, std::min(g.ow, last / g.sw + 1));
    const int64_t rows = g.n * g.oh;
    const int64_t wanted = (2 * cpu_threads() + std::max<int64_t>(rows, 1) - 1) / std::max<int64_t>(rows, 1);
    column_items_ = std::max<int64_t>(1, std::min(blocks_, wanted));
    workers_ = plan_workers(items(), g.ow * g.taps() * g.c / column_items_);
    if (constant_filter) {
      packed_.resize(static_cast<size_t>(g.taps() * g.c));
      pack(constant_filter, packed_.data());
    }
  }

  int64_t items() const { return g_.n * g_.oh * column_items_; }
  int workers() const { return workers_; }
  size_t workspace_bytes() const { return packed_.empty() ? static_cast<size_t>(g_.taps() * g_.c) * sizeof(float) : 0; }

  void run(const KernelArgs& args) const override {
    const float* w = packed_.data();
    if (packed_.empty()) {
      float* out = static_cast<float*>(args.workspace);
      pack(args.in(1), out);
      w = out;
    }
    cpu_thread_pool().parallel_for(items(), [&](int64_t begin, int64_t end, int) {
      for (int64_t item = begin; item < end; ++item) run_row(args, w, item / column_items_, item % column_items_);
    }, workers_);
  }

 private:
  void pack(const float* w, float* out) const {
    for (int64_t ch = 0; ch < g_.c; ++ch)
      for (int64_t t = 0; t < g_.taps(); ++t) out[t * g_.c + ch] = w[ch * g_.taps() + t];
  }

  // Output row `row` (image row / OH, row % OH), channel blocks of column item `item`.
  void run_row(const KernelArgs& args, const float* w, int64_t row, int64_t item) const {
    const int64_t image = row / g_.oh, oh = row % g_.oh;
    const float* x = args.in(0) + image * g_.h * g_.w * g_.c;
    constexpr int64_t kStackRows = 16;
    const float* stack[kStackRows];
    std::vector<const float*> heap(static_cast<size_t>(g_.r > kStackRows ? g_.r : 0));
    const float** window = g_.r > kStackRows ? heap.data() : stack;
    for (int64_t kh = 0; kh < g_.r; ++kh) {
      const int64_t ih = oh * g_.sh - g_.ph + kh * g_.dh;
      window[kh] = ih >= 0 && ih < g_.h ? x + ih * g_.w * g_.c : nullptr;
    }
    DepthwiseStrip strip{window, g_.r, g_.s, 0, g_.s, 0, g_.sw, g_.dw, g_.c};
    const int64_t b0 = item * blocks_ / column_items_, b1 = (item + 1) * blocks_ / column_items_;
    const int64_t c_begin = b0 * kDepthwiseChannels, c_end = std::min(g_.c, b1 * kDepthwiseChannels);
    const int64_t y_row = row * g_.ow * g_.c;
    float* y = args.out(0);
    for (int64_t c0 = c_begin; c0 < c_end; c0 += kDepthwiseChannels) {
      const int64_t n = std::min(kDepthwiseChannels, c_end - c0);
      auto run = [&](int64_t ow, int64_t m) {
        strip.iw0 = ow * g_.sw - g_.pw;
        NhwcEpilogue e = clamp_of(fusion_, act_);
        e.bias = has_bias_ ? args.in(2) + c0 : nullptr;
        e.residual = fusion_ == NhwcFusion::AddRelu ? args.in(kResidualInput) + y_row + ow * g_.c + c0 : nullptr;
        nhwc_depthwise_strip(strip, c0, n, w, y + y_row + ow * g_.c + c0, m, e);
      };
      auto border = [&](int64_t ow) {  // this pixel's column taps inside X
        const int64_t iw0 = ow * g_.sw - g_.pw;
        int64_t lo = 0, hi = g_.s;
        while (lo < hi && iw0 + lo * g_.dw < 0) ++lo;
        while (hi > lo && iw0 + (hi - 1) * g_.dw >= g_.w) --hi;
        strip.kw_lo = lo, strip.kw_hi = hi;
        run(ow, 1);
      };
      NhwcEpilogue whole = clamp_of(fusion_, act_);  // Note [depthwise row walk]
      whole.bias = has_bias_ ? args.in(2) + c0 : nullptr;
      whole.residual = fusion_ == NhwcFusion::AddRelu ? args.in(kResidualInput) + y_row + c0 : nullptr;
      if (nhwc_depthwise_row_walk(strip, c0, n, w, y + y_row + c0, g_.ow, g_.w, g_.pw, whole)) continue;
      for (int64_t ow = 0; ow < inner_lo_; ++ow) border(ow);
      strip.kw_lo = 0, strip.kw_hi = g_.s;
      if (inner_hi_ > inner_lo_) run(inner_lo_, inner_hi_ - inner_lo_);  // the inside pixels, in strips, one call
      for (int64_t ow = inner_hi_; ow < g_.ow; ++ow) border(ow);
    }
    if (act_.kind == ConvActivationKind::None || act_.kind == ConvActivationKind::Clip) return;  // Clip: in the strip
    if (c_begin == 0 && c_end == g_.c) {
      apply_conv_activation(act_, y + y_row, g_.ow * g_.c);
      return;
    }
    for (int64_t ow = 0; ow < g_.ow; ++ow) apply_conv_activation(act_, y + y_row + ow * g_.c + c_begin, c_end - c_begin);
  }

  NhwcConv g_;
  NhwcFusion fusion_;
  ConvActivation act_;
  bool has_bias_;
  int64_t blocks_;  // 64-channel blocks
  int64_t inner_lo_ = 0, inner_hi_ = 0;
  int64_t column_items_ = 1;
  int workers_ = 1;
  std::vector<float> packed_;  // [R * S, C]
};

NhwcConv nhwc_conv(const Node& node, const Shape& x, const Shape& w) {
  // x [N, H, W, C], w [K, R, S, Cg] (Note [channels last]: the stored shapes)
  const ConvGeometry geo = make_conv_geometry(node, WindowOp::Conv, {x[1], x[2]}, {w[1], w[2]});
  NhwcConv g;
  g.n = x[0], g.h = x[1], g.w = x[2], g.c = x[3], g.k = w[0];
  g.oh = geo.output[0], g.ow = geo.output[1], g.r = geo.kernel[0], g.s = geo.kernel[1];
  g.sh = geo.strides[0], g.sw = geo.strides[1], g.ph = geo.pads_begin[0], g.pw = geo.pads_begin[1];
  g.dh = geo.dilations[0], g.dw = geo.dilations[1], g.group = geo.group;
  return g;
}


// Note [residual in place]: Conv+Add+Relu's residual z has Y's shape and is read only by the
// tile's store of the same element (y = relu(sum + bias + z)), so with one channel block (the
// store runs once per output) Y may take z's bytes where nothing reads z later (Note [output
// over an input] in runtime/planner.cc), as onnxruntime's fused conv sums into its Sum input:
// the store then writes the line it has just read, instead of reading z's line and the line of
// a Y elsewhere (which a store reads first) and writing that. ResNet-50's 56x56 64 -> 256 convs
// (z and Y 3.2 MB each): 1.155 -> 1.023 ms at 1 thread, 0.643 -> 0.571 at 2 (one conv a model,
// medians of 4 alternating runs, this 2-core EPYC); 14x14 and 7x7 ones 1-9%. Several channel
// blocks keep Y apart: an earlier block's partial sums would overwrite z before the last reads it.

// Column items per strip item: enough items for twice the threads where the pixels alone are few.
//
// Note [column-major items]: where the packed filter has more floats than X and Y together, items
// are numbered column item first (item = column item x strip items + strip item), so the thread
// pool's contiguous blocks of items (Note [worker blocks]) split a conv of few pixels by its
// filter panels: each worker streams its share of the filter, not all of it. Numbered the other
// way, ResNet-50's 7x7 and 14x14 1x1 convs (2 strip items x 2 column items at 2 threads) had each
// worker read the whole filter (4 MB for 512 -> 2048) for half the pixels. 2 threads, one conv a
// model, medians of 5 alternating runs: 512 -> 2048 at 7x7 with the residual 0.588 -> 0.473 ms,
// 2048 -> 512 0.551 -> 0.492, 256 -> 1024 at 14x14 0.634 -> 0.527 (this 2-core EPYC). Where X and
// Y outweigh the filter, strips first keep a worker on its own rows, which the next layer's
// worker of the same block reads from its cache (Note [worker blocks]): ViT-Tiny's products,
// [197 x 192] x [192 x 768] and the like, took 10.1 -> 11.6 ms column first at 2 threads, and its
// Transposes after them 0.39 -> 0.79. A conv of many pixels has one column item: no change. Each
// output is still computed by one item in the same order: the same bits at any thread count.
int64_t column_items_for(const NhwcConv& g, int pixels, int64_t columns) {
  const int64_t strip_items = strip_items_for(g, pixels);
  const int64_t wanted = (2 * cpu_threads() + strip_items - 1) / strip_items;
  return std::max<int64_t>(1, std::min(columns, wanted));
}

// The dense tiles for g: "packed gemm [RDx]RxS PxW[ gathered] (path)[ xN threads]".
DenseNhwc make_dense_nhwc(const NhwcConv& g, NhwcFusion fusion, const ConvActivation& act, bool has_bias,
                          const float* constant_filter) {
  const NhwcTileShape shape = dense_shape(g);
  const int64_t columns = column_items_for(g, shape.pixels, g.group * shape.panels());
  // The threads: items of ~pixels x taps x channels x filters / items multiply-adds each.
  const int64_t items = strip_items_for(g, shape.pixels) * columns;
  const int64_t macs = g.pixels() * g.taps() * g.group_channels() * g.k;
  const int workers = plan_workers(items, macs / std::max<int64_t>(1, items));
  auto kernel = std::make_unique<DenseNhwcKernel>(g, shape, columns, fusion, act, has_bias, workers, constant_filter);
  const std::string window = (g.rd > 1 ? std::to_string(g.rd) + "x" : "") + std::to_string(g.r) + "x" + std::to_string(g.s);
  DenseNhwc out;
  out.algorithm = with_threads("packed gemm " + window + " " + std::to_string(shape.pixels) + "x" +
                                   std::to_string(shape.panel_width()) + (shape.taps != g.taps() ? " gathered" : "") +
                                   " (" + nhwc_tile_path() + ")",
                               workers);
  out.workspace_bytes = kernel->workspace_bytes();
  out.kernel = std::move(kernel);
  out.residual_in_place = fusion == NhwcFusion::AddRelu && shape.blocks() <= 1;  // Note [residual in place]
  return out;
}

KernelChoice plan_conv_nhwc(const Node& node, const std::vector<ValueInfo>& inputs, NhwcFusion fusion) {
  const Shape& x = inputs[0].info.shape;
  const Shape& w = inputs[1].info.shape;
  if (x.size() != 4 || w.size() != 4) node_fail<UnsupportedModelError>(node, "the CPU's channels-last conv is 2-D only");
  const NhwcConv g = nhwc_conv(node, x, w);
  const bool has_bias = inputs.size() > 2 && inputs[2].present;
  Node base = node;
  base.op_type = channels_first_op(node.op_type);
  const ConvActivation act = conv_activation_of(base);
  const float* constant = inputs[1].constant ? reinterpret_cast<const float*>(inputs[1].constant->data.data()) : nullptr;
  const std::string path = " (" + nhwc_tile_path() + ")";
  KernelChoice choice;
  const std::string window = std::to_string(g.r) + "x" + std::to_string(g.s);
  if (g.depthwise()) {
    auto depthwise = std::make_unique<DepthwiseNhwcKernel>(g, fusion, act, has_bias, constant);
    choice.algorithm = with_threads("nhwc depthwise " + window + path, depthwise->workers());
    choice.workspace_bytes = depthwise->workspace_bytes();
    choice.rejected.push_back({"im2col+gemm", "channels-last: one channel per group (direct depthwise)"});
    choice.kernel = std::move(depthwise);
    return choice;
  }
  const std::string why_not_one_channel = why_not_one_channel_nhwc(g, constant != nullptr);
  if (why_not_one_channel.empty()) {  // Note [one-channel nhwc conv]
    OneChannelNhwc one = make_one_channel_nhwc(g, constant, has_bias, fusion == NhwcFusion::AddRelu, clamp_of(fusion, act), act);
    choice.algorithm = with_threads("nhwc direct " + window + " one channel" + path, one.workers);
    choice.workspace_bytes = one.workspace_bytes;
    choice.rejected.push_back({"nhwc packed gemm", "not needed: one input channel (Note [one-channel nhwc conv])"});
    choice.kernel = std::move(one.kernel);
    return choice;
  }
  choice.rejected.push_back({"nhwc direct one channel", why_not_one_channel});
  const std::string why_not_winograd = why_not_winograd_nhwc(g, constant != nullptr);
  if (why_not_winograd.empty()) {
    WinogradNhwc wino = make_winograd_nhwc(g, constant, has_bias, fusion == NhwcFusion::AddRelu, clamp_of(fusion, act), act);
    choice.algorithm = with_threads("nhwc winograd F(2x2,3x3)" + path, wino.workers);
    choice.workspace_bytes = wino.workspace_bytes;
    choice.rejected.push_back({"nhwc packed gemm", "not needed: a 3x3 unit-stride conv (Note [channels-last winograd])"});
    choice.kernel = std::move(wino.kernel);
    return choice;
  }
  choice.rejected.push_back({"nhwc winograd F(2x2,3x3)", why_not_winograd});
  DenseNhwc dense = make_dense_nhwc(g, fusion, act, has_bias, constant);
  choice.algorithm = "nhwc " + dense.algorithm;
  choice.workspace_bytes = dense.workspace_bytes;
  if (dense.residual_in_place) choice.overwrites_input = static_cast<int>(kResidualInput);
  choice.rejected.push_back({"im2col+gemm", "channels-last: the packed filter reads X in place (Note [channels-last conv on the cpu])"});
  choice.kernel = std::move(dense.kernel);
  return choice;
}

KernelFactory nhwc_factory(NhwcFusion fusion) {
  return [fusion](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
    return plan_conv_nhwc(node, inputs, fusion);
  };
}

}  // namespace

DenseNhwc make_dense_nhwc_conv(const NhwcConv& g, bool has_bias, const float* constant_filter) {
  return make_dense_nhwc(g, NhwcFusion::None, ConvActivation{}, has_bias, constant_filter);
}

// Note [packed product]: MatMul and Gemm with a constant B on the dense tiles, as a 1x1 conv of
// X [1, M, 1, K] (ConvNeXt's and the transformers' MLPs: [3136 x 96] x [96 x 384] took OpenBLAS
// the time of a whole ONNX Runtime run, repacking B on every call). A product of one row keeps
// OpenBLAS: sgemv reads B in place, as fast as the tiles ([1 x 1280] x [1280 x 1000]: 0.201
// against 0.204 ms) and with less overhead on a small one ([1 x 64] x [64 x 64]: 8 against 10
// us). From 2 rows sgemm packs B on every call, which costs more than the tile's work: [2 x 1280]
// x [1280 x 1000], 2.1 -> 0.20 ms; Faster R-CNN's fc6 on its 3 proposals, [3 x 12544] x [12544 x
// 1024], 7.1 -> 2.8 ms (onnxruntime 2.95); LeNet-5's fc1 at batch 10, [10 x 400] x [400 x 120],
// 49 -> 7.6 us (this Xeon, AVX-512, 1 thread; the bound was 32 rows, then 4). Products of fewer
// rows than a strip run a strip of that many (Note [short strips] in conv_nhwc_tiles_cpu.h).
constexpr int64_t kPackedProductMinRows = 2;

std::string why_not_packed_product(int64_t m, int64_t k, int64_t n) {
  if (!nhwc_tiles_vectorized()) return "no AVX-512 or AVX2 (the packed tiles' path)";
  if (m < kPackedProductMinRows) return std::to_string(m) + " rows, under " + std::to_string(kPackedProductMinRows);
  if (k < 16 || n < 16) return "K or N under 16";
  return "";
}

PackedProduct make_packed_product(int64_t m, int64_t k, int64_t n, const float* b, bool b_nk, bool has_bias,
                                  bool relu) {
  NhwcConv g;
  g.n = 1, g.h = m, g.w = 1, g.c = k, g.k = n, g.oh = m, g.ow = 1;
  std::vector<float> w_nk;  // the filter [N, K]
  if (!b_nk) {
    w_nk.resize(static_cast<size_t>(n * k));
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < n; ++j) w_nk[static_cast<size_t>(j * k + i)] = b[i * n + j];
    b = w_nk.data();
  }
  const NhwcTileShape shape = nhwc_tile_shape(n, k, 1, m);
  const NhwcFusion fusion = relu ? NhwcFusion::Relu : NhwcFusion::None;
  const int64_t columns = column_items_for(g, shape.pixels, shape.panels());
  const int64_t items = strip_items_for(g, shape.pixels) * columns;
  const int workers = plan_workers(items, m * k * n / std::max<int64_t>(1, items));
  auto kernel = std::make_unique<DenseNhwcKernel>(g, shape, columns, fusion, ConvActivation{}, has_bias, workers, b);
  PackedProduct out;
  out.algorithm = with_threads("packed gemm " + std::to_string(shape.pixels) + "x" +
                               std::to_string(shape.panel_width()) + " (" + nhwc_tile_path() + ")", workers);
  out.workspace_bytes = kernel->workspace_bytes();
  out.kernel = std::move(kernel);
  return out;
}

bool choose_packed_product(KernelChoice& choice, int64_t m, int64_t k, int64_t n, const ValueInfo& b, bool b_nk,
                           bool has_bias, bool relu, const std::string& replaced) {
  if (!b.constant || b.info.dtype != DType::Float32 || planning_mutable_constants()) return false;
  const std::string why_not = why_not_packed_product(m, k, n);
  if (!why_not.empty()) {
    choice.rejected.push_back({"packed gemm", why_not});
    return false;
  }
  PackedProduct p = make_packed_product(m, k, n, b.constant->as<float>(), b_nk, has_bias, relu);
  choice.kernel = std::move(p.kernel);
  choice.algorithm = p.algorithm;
  choice.workspace_bytes = p.workspace_bytes;
  choice.rejected.push_back({replaced, "not needed: B is a constant, packed once (Note [packed product])"});
  return true;
}

void register_cpu_conv_nhwc_kernels(KernelRegistry& r) {
  const std::string suffix = kChannelsLastSuffix;
  r.add("Conv" + suffix, nhwc_factory(NhwcFusion::None));
  r.add("Conv+Relu" + suffix, nhwc_factory(NhwcFusion::Relu));
  r.add("Conv+Add+Relu" + suffix, nhwc_factory(NhwcFusion::AddRelu));
  for (const char* op : {"Conv+Clip", "Conv+HardSwish", "Conv+Swish"}) r.add(op + suffix, nhwc_factory(NhwcFusion::None));
}

}  // namespace dnnx
