// Note [one-channel nhwc conv]
// A conv of one input channel (crnn's 3x3 stem on a 32x128 grey image, 32 filters, + Relu) ran
// on the dense tiles (Note [packed nhwc filter]) with one multiply-add per tap and pixel between
// pointer loads: the strip's table (9 pointers a pixel, written by strip_rows) and the tile's
// reads of it cost more than the FMAs. Gathered rows (Note [gathered rows]) copy taps floats a
// pixel instead, no better. So here an item (a few output rows of one image) copies its input
// rows once into a zero-padded plane (1/K of the output's size; the padding and the last strip's
// overrun read zeros: no bounds in the loop), and each strip of P pixels x 16 V filters of an
// output row starts from the bias and adds its taps in order: per tap, V filter vectors and P
// broadcasts of the plane's row, P x V FMAs, the accumulators in registers (the stores' loops
// have constant bounds so that they unroll). Each output is one item's, the same sum in the same
// order whatever the thread count.
// Measured (medians of 10 interleaved rounds of 50 calls, 1 thread, this 2-core AVX-512 Xeon
// with a CI job on the other core): crnn's stem 74.5 -> 24.5 us, onnxruntime's node 25.0 us; with
// channels-last forced (DNNX_CONV_NHWC_MIN_CHANNELS=0; by default these stay NCHW) speech_gru's
// 11x11 stem, 16 filters, 246 -> 129 us (gathered rows before), mnist-8's 5x5, 8 filters,
// 36 -> 8.3 us. A strip of 8 pixels instead of 12 (no overrun at 128 columns) measured the same.
#include "backends/cpu/conv/conv_nhwc_one_channel_cpu.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/cpu/runtime/thread_pool.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DNNX_ONE_CHANNEL_AVX512 1
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // as in conv_nhwc_tiles_cpu.cc
#endif

namespace dnnx {

namespace {

constexpr int64_t kItemPixels = 1024;  // output pixels per item: its padded rows stay in L1

// One output row's strips: x is the padded plane at the row's first window row (ldx floats a
// row), w the panel [taps][16 V], y and z (the residual, or null) the row at the panel's first
// filter, K floats a pixel; n filters of the panel are stored.
struct OneChannelRow {
  const float* x;
  int64_t ldx, r, s, sw, dh, dw, ow, k, n;
  const float* w;
  const float* bias;
  const float* z;
  float* y;
};

inline float finish(float v, const float* z, const NhwcEpilogue& e) {
  if (z) v = v + *z;
  return clamped(v, e);
}

template <int P, int V>
void row_portable(const OneChannelRow& a, const NhwcEpilogue& e) {
  constexpr int NR = 16 * V;
  for (int64_t first = 0; first < a.ow; first += P) {
    float acc[P][NR];  // from the bias, as the AVX-512 rows
    for (int p = 0; p < P; ++p)
      for (int j = 0; j < NR; ++j) acc[p][j] = a.bias && j < a.n ? a.bias[j] : 0.0f;
    for (int64_t kh = 0; kh < a.r; ++kh) {
      for (int64_t kw = 0; kw < a.s; ++kw) {
        const float* x = a.x + kh * a.dh * a.ldx + first * a.sw + kw * a.dw;
        const float* w = a.w + (kh * a.s + kw) * NR;
        for (int p = 0; p < P; ++p)
          for (int j = 0; j < NR; ++j) acc[p][j] += x[p * a.sw] * w[j];
      }
    }
    for (int64_t p = 0; p < std::min<int64_t>(P, a.ow - first); ++p) {
      for (int64_t j = 0; j < a.n; ++j) {
        const int64_t at = (first + p) * a.k + j;
        a.y[at] = finish(acc[p][j], a.z ? a.z + at : nullptr, e);
      }
    }
  }
}

#ifdef DNNX_ONE_CHANNEL_AVX512
#define DNNX_AVX512 __attribute__((target("avx512f")))

DNNX_AVX512 inline __mmask16 lanes(int64_t valid) {
  return valid >= 16 ? static_cast<__mmask16>(0xFFFF) : valid <= 0 ? 0 : static_cast<__mmask16>((1u << valid) - 1);
}

// SW: the stride along W when it is 1 or 2 (the broadcasts at constant offsets), 0 for a.sw.
template <int P, int V, int SW>
DNNX_AVX512 void row_avx512(const OneChannelRow& a, const NhwcEpilogue& e) {
  constexpr int NR = 16 * V;
  const int64_t sw = SW ? SW : a.sw;
  __mmask16 mask[V];
  for (int v = 0; v < V; ++v) mask[v] = lanes(a.n - 16 * v);
  const __m512 lo = _mm512_set1_ps(e.lo), hi = _mm512_set1_ps(e.hi);
  __m512 b0[V];
  for (int v = 0; v < V; ++v) b0[v] = a.bias ? _mm512_maskz_loadu_ps(mask[v], a.bias + 16 * v) : _mm512_setzero_ps();
  for (int64_t first = 0; first < a.ow; first += P) {
    __m512 acc[P][V];  // from the bias (the bias then the taps, in order)
    for (int p = 0; p < P; ++p)
      for (int v = 0; v < V; ++v) acc[p][v] = b0[v];
    const float* xs = a.x + first * sw;
    const float* w = a.w;
    for (int64_t kh = 0; kh < a.r; ++kh) {
      const float* xr = xs + kh * a.dh * a.ldx;
      for (int64_t kw = 0; kw < a.s; ++kw, w += NR) {
        const float* x = xr + kw * a.dw;
        __m512 wv[V];
        for (int v = 0; v < V; ++v) wv[v] = _mm512_loadu_ps(w + 16 * v);
        for (int p = 0; p < P; ++p) {
          const __m512 b = _mm512_set1_ps(x[p * sw]);
          for (int v = 0; v < V; ++v) acc[p][v] = _mm512_fmadd_ps(b, wv[v], acc[p][v]);
        }
      }
    }
    const int64_t count = std::min<int64_t>(P, a.ow - first);
    // Constant bounds, the tests inside: the loops unroll and acc stays in registers (a `break`
    // kept them on the stack, 24 stores and loads a strip).
#pragma GCC unroll 16
    for (int p = 0; p < P; ++p) {
      if (p >= count) continue;
      const int64_t at = (first + p) * a.k;
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) {
        if (!mask[v]) continue;
        __m512 s = acc[p][v];
        if (a.z) s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(mask[v], a.z + at + 16 * v));
        if (e.clamp) s = _mm512_min_ps(hi, _mm512_max_ps(lo, s));  // NaN passes through
        _mm512_mask_storeu_ps(a.y + at + 16 * v, mask[v], s);
      }
    }
  }
}
#endif

using RowFn = void (*)(const OneChannelRow&, const NhwcEpilogue&);

template <int P, int V>
RowFn row_fn_of(int64_t sw) {
#ifdef DNNX_ONE_CHANNEL_AVX512
  if (nhwc_tiles_have_avx512()) return sw == 1 ? row_avx512<P, V, 1> : sw == 2 ? row_avx512<P, V, 2> : row_avx512<P, V, 0>;
#endif
  (void)sw;
  return row_portable<P, V>;
}

// P x V accumulators, V filter vectors and a broadcast within the 32 registers.
RowFn row_fn(int vectors, int64_t sw) {
  switch (vectors) {
    case 1: return row_fn_of<14, 1>(sw);
    case 2: return row_fn_of<12, 2>(sw);
    case 3: return row_fn_of<8, 3>(sw);
    default: return row_fn_of<6, 4>(sw);
  }
}

int pixels_of(int vectors) { return vectors == 1 ? 14 : vectors == 2 ? 12 : vectors == 3 ? 8 : 6; }

class OneChannelNhwcKernel final : public Kernel {
 public:
  OneChannelNhwcKernel(const NhwcConv& g, const float* filter, bool has_bias, bool residual, const NhwcEpilogue& clamp,
                       const ConvActivation& act)
      : g_(g), has_bias_(has_bias), residual_(residual), clamp_(clamp), act_(act) {
    // V: the panel width that pads K least (the wider on a tie), as the dense tiles choose.
    int64_t best = -1;
    for (int v = 4; v >= 1; --v) {
      const int64_t padded = (g.k + 16 * v - 1) / (16 * v) * (16 * v);
      if (best < 0 || padded < best) best = padded, vectors_ = v;
    }
    fn_ = row_fn(vectors_, g.sw);
    const int64_t nr = 16 * vectors_, panels = (g.k + nr - 1) / nr, taps = g.r * g.s;
    packed_.assign(static_cast<size_t>(panels * taps * nr), 0.0f);  // [panel][tap][16 V], zeros past K
    for (int64_t k = 0; k < g.k; ++k)
      for (int64_t t = 0; t < taps; ++t) packed_[(k / nr * taps + t) * nr + k % nr] = filter[k * taps + t];
    // Items: ranges of output rows of one image, about kItemPixels pixels, at least 2 per thread.
    const int64_t oh = std::max<int64_t>(1, g.oh), images = std::max<int64_t>(1, g.n);
    const int64_t wanted = std::max<int64_t>((2 * cpu_threads() + images - 1) / images, g.oh * g.ow / kItemPixels);
    rows_per_item_ = (oh + std::clamp<int64_t>(wanted, 1, oh) - 1) / std::clamp<int64_t>(wanted, 1, oh);
    row_items_ = (oh + rows_per_item_ - 1) / rows_per_item_;
    const int64_t p = pixels_of(vectors_);
    ldx_ = ((g.ow + p - 1) / p * p - 1) * g.sw + (g.s - 1) * g.dw + 1;
    plane_rows_ = (rows_per_item_ - 1) * g.sh + (g.r - 1) * g.dh + 1;
    workers_ = plan_workers(items(), rows_per_item_ * g.ow * taps * g.k);
  }

  int64_t items() const { return g_.n * row_items_; }
  int workers() const { return workers_; }
  size_t workspace_bytes() const { return static_cast<size_t>(workers_ * plane_rows_ * ldx_) * sizeof(float); }

  void run(const KernelArgs& args) const override {
    float* planes = static_cast<float*>(args.workspace);
    cpu_thread_pool().parallel_for(items(), [&](int64_t begin, int64_t end, int worker) {
      float* plane = planes + worker * plane_rows_ * ldx_;
      for (int64_t item = begin; item < end; ++item) run_item(args, item, plane);
    }, workers_);
  }

 private:
  void run_item(const KernelArgs& args, int64_t item, float* plane) const {
    const int64_t image = item / row_items_, oh0 = item % row_items_ * rows_per_item_;
    const int64_t oh1 = std::min(g_.oh, oh0 + rows_per_item_);
    if (oh0 >= oh1 || g_.ow <= 0) return;
    // The padded plane: row i is X's row oh0 * SH - PH + i, column j X's column j - PW (zeros outside).
    const float* x = args.in(0) + image * g_.h * g_.w;
    const int64_t rows = (oh1 - oh0 - 1) * g_.sh + (g_.r - 1) * g_.dh + 1;
    const int64_t lead = std::min(ldx_, g_.pw), run = std::max<int64_t>(0, std::min(g_.w, ldx_ - g_.pw));
    for (int64_t i = 0; i < rows; ++i) {
      float* out = plane + i * ldx_;
      const int64_t ih = oh0 * g_.sh - g_.ph + i;
      if (ih < 0 || ih >= g_.h) {
        std::fill(out, out + ldx_, 0.0f);
        continue;
      }
      std::fill(out, out + lead, 0.0f);
      std::memcpy(out + lead, x + ih * g_.w, static_cast<size_t>(run) * sizeof(float));
      std::fill(out + lead + run, out + ldx_, 0.0f);
    }
    const int64_t nr = 16 * vectors_, taps = g_.r * g_.s;
    float* y = args.out(0) + (image * g_.oh + oh0) * g_.ow * g_.k;
    const float* z = residual_ ? args.in(3) + (image * g_.oh + oh0) * g_.ow * g_.k : nullptr;
    for (int64_t oh = oh0; oh < oh1; ++oh) {
      const int64_t row = (oh - oh0) * g_.ow * g_.k;
      for (int64_t f = 0; f < g_.k; f += nr) {
        OneChannelRow a{plane + (oh - oh0) * g_.sh * ldx_, ldx_, g_.r, g_.s, g_.sw, g_.dh, g_.dw, g_.ow, g_.k,
                        std::min(nr, g_.k - f), packed_.data() + f / nr * taps * nr,
                        has_bias_ ? args.in(2) + f : nullptr, z ? z + row + f : nullptr, y + row + f};
        fn_(a, clamp_);
      }
    }
    if (act_.kind != ConvActivationKind::None && act_.kind != ConvActivationKind::Clip)  // Clip: in the store
      apply_conv_activation(act_, y, (oh1 - oh0) * g_.ow * g_.k);
  }

  NhwcConv g_;
  bool has_bias_, residual_;
  NhwcEpilogue clamp_;
  ConvActivation act_;
  int vectors_ = 1;
  RowFn fn_ = nullptr;
  std::vector<float> packed_;
  int64_t rows_per_item_ = 1, row_items_ = 1, ldx_ = 1, plane_rows_ = 1;
  int workers_ = 1;
};

}  // namespace

std::string why_not_one_channel_nhwc(const NhwcConv& g, bool constant_filter) {
  if (g.c != 1 || g.group != 1) return "more than one input channel";
  if (!constant_filter) return "the filter is not a constant (packed at plan time)";
  if (g.rd != 1 || g.od != 1 || g.d != 1) return "a 3-D conv";
  return "";
}

OneChannelNhwc make_one_channel_nhwc(const NhwcConv& g, const float* filter, bool has_bias, bool residual,
                                     const NhwcEpilogue& clamp, const ConvActivation& act) {
  auto kernel = std::make_unique<OneChannelNhwcKernel>(g, filter, has_bias, residual, clamp, act);
  OneChannelNhwc out;
  out.workers = kernel->workers();
  out.workspace_bytes = kernel->workspace_bytes();
  out.kernel = std::move(kernel);
  return out;
}

}  // namespace dnnx
