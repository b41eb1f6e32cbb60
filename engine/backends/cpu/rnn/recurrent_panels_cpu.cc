// Note [recurrent panels]
// At batch 1 an LSTM step is the matrix-vector product h [1, H] · R^T, R [4H, H] (256 KB at hidden
// 128), which does not fit L1: the step streams R from L2 and is bound by that stream. The dot
// products of Note [recurrent dot product] read R as ONNX lays it out, 8 rows at a time (8
// streams) in 8-wide vectors, and reduce each row's lanes at the end. Here R^T is packed once, at
// plan time, in panels of 256 columns ([H, 256] each, 64-byte aligned): a step broadcasts h[k]
// and adds it times row k of the panel into 16 16-wide accumulators, so the panel is read as one
// contiguous stream of whole cache lines, with no reduction across lanes. Measured on this
// project's Xeon (1 thread, [1, 128] x [128, 512], two directions' R alternating, as in a
// bidirectional layer): 2.86 us a step with the dot products, 2.35 with the panels, 2.25 with
// the prefetch below (panels of 128 columns, 8 accumulators: 2.46; dot products in 16-wide
// vectors: 2.81). A packed copy goes stale when fine-tuning changes R, so the LSTM packs only a
// constant that no trainer changes (Note [mutable constants]), and reads R as given otherwise.
#include "backends/cpu/rnn/recurrent_panels_cpu.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "backends/cpu/rnn/recurrent_product_cpu.h"
#include "runtime/mutable_constants.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DNNX_PANELS_AVX512 1
#endif

namespace dnnx {

namespace {

constexpr int64_t kLanes = 16;
constexpr int64_t kPanelVectors = 16;  // accumulators of a panel: 16 of the 32 zmm registers
constexpr int64_t kPanelWidth = kLanes * kPanelVectors;
// The prefetch distance: 4 panel rows (4 KB) ahead of the row being read.
constexpr int64_t kPrefetchRows = 4;

int64_t padded(int64_t width) { return (width + kLanes - 1) / kLanes * kLanes; }

#ifdef DNNX_PANELS_AVX512
#define DNNX_AVX512 __attribute__((target("avx512f")))

// out [vectors * 16, the last vector's first `last` lanes] = h [k] · panel [k, vectors * 16].
template <int kVectors>
DNNX_AVX512 void panel_product(int64_t k, const float* h, const float* panel, float* out, int64_t last) {
  constexpr int64_t width = kVectors * kLanes;
  __m512 acc[kVectors];
#pragma GCC unroll 16
  for (int j = 0; j < kVectors; ++j) acc[j] = _mm512_setzero_ps();
  for (int64_t kk = 0; kk < k; ++kk) {
    const __m512 x = _mm512_set1_ps(h[kk]);
    const float* row = panel + kk * width;
#pragma GCC unroll 16
    for (int j = 0; j < kVectors; ++j) {
      _mm_prefetch(reinterpret_cast<const char*>(row + kPrefetchRows * width + j * kLanes), _MM_HINT_T0);
      acc[j] = _mm512_fmadd_ps(x, _mm512_load_ps(row + j * kLanes), acc[j]);
    }
  }
#pragma GCC unroll 16
  for (int j = 0; j < kVectors - 1; ++j) _mm512_storeu_ps(out + j * kLanes, acc[j]);
  const __mmask16 mask = static_cast<__mmask16>((1u << last) - 1u);
  _mm512_mask_storeu_ps(out + (kVectors - 1) * kLanes, mask, acc[kVectors - 1]);
}

using PanelFn = void (*)(int64_t, const float*, const float*, float*, int64_t);

template <int... kV>
constexpr PanelFn panel_fn(int vectors, std::integer_sequence<int, kV...>) {
  constexpr PanelFn table[] = {&panel_product<kV + 1>...};
  return table[vectors - 1];
}

DNNX_AVX512 void product_avx512(int64_t n, int64_t k, const float* h, const float* panels, float* out) {
  for (int64_t c0 = 0; c0 < n; c0 += kPanelWidth) {
    const int64_t width = std::min(kPanelWidth, n - c0);
    const int vectors = static_cast<int>(padded(width) / kLanes);
    const int64_t last = width - (vectors - 1) * kLanes;
    panel_fn(vectors, std::make_integer_sequence<int, kPanelVectors>{})(k, h, panels + c0 * k, out + c0, last);
  }
}
#endif

}  // namespace

bool recurrent_panels_available() {
#ifdef DNNX_PANELS_AVX512
  static const bool available = recurrent_vectorized() && __builtin_cpu_supports("avx512f");
  return available;
#else
  return false;
#endif
}

void RecurrentPanels::Free::operator()(float* p) const { std::free(p); }

RecurrentPanels::RecurrentPanels(int64_t n, int64_t k, const float* r) : n_(n), k_(k) {
  // Panel c0 holds columns [c0, c0 + width) of R^T at offset c0 * k: only the last is narrower,
  // so the panels before it are kPanelWidth wide and the offsets add up.
  size_t floats = 0;
  for (int64_t c0 = 0; c0 < n; c0 += kPanelWidth) floats += static_cast<size_t>(k * padded(std::min(kPanelWidth, n - c0)));
  const size_t bytes = std::max<size_t>((floats * sizeof(float) + 63) / 64 * 64, 64);
  data_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
  if (!data_) throw std::bad_alloc();
  float* to = data_.get();
  for (int64_t c0 = 0; c0 < n; c0 += kPanelWidth) {
    const int64_t width = std::min(kPanelWidth, n - c0), stride = padded(width);
    for (int64_t kk = 0; kk < k; ++kk) {
      float* row = to + kk * stride;
      for (int64_t j = 0; j < width; ++j) row[j] = r[(c0 + j) * k + kk];
      std::fill(row + width, row + stride, 0.0f);
    }
    to += k * stride;
  }
}

void RecurrentPanels::product(const float* h, float* out) const {
#ifdef DNNX_PANELS_AVX512
  product_avx512(n_, k_, h, data_.get(), out);
#else
  (void)h, (void)out;
#endif
}

const float* recurrent_constant_weights(const ValueInfo& v) {
  if (!v.constant || v.info.dtype != DType::Float32 || planning_mutable_constants()) return nullptr;
  return v.constant->as<float>();
}

// Inputs narrower than this keep sgemm (Note [lstm projection]).
constexpr int64_t kMinPackedInput = 32;

PackedProduct plan_recurrent_projection(int64_t rows, int64_t input, int64_t width, const ValueInfo& w, bool has_bias) {
  const float* constant = recurrent_constant_weights(w);
  if (!constant || input < kMinPackedInput || !why_not_packed_product(rows, input, width).empty()) return {};
  return make_packed_product(rows, input, width, constant, true, has_bias, false);
}

}  // namespace dnnx
