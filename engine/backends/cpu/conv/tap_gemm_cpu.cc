// Note [tap gemm]
// The small products of LeNet's convs and of an LSTM step, where OpenBLAS's sgemm spends its
// time packing operands and on ragged edges (measurements: Note [direct conv] in
// conv_direct_cpu.cc, Note [lstm batch blocks] in lstm_cpu.cc). For a tile of up to MR rows x 3
// 8-wide vectors of columns, the MR*NV sums stay in registers; for every k the tile's B vectors
// are loaded where they lie (a conv's image, a GEMM's row k), each row's A[m, k] is broadcast and
// the products added (FMA). The epilogue (bias, residual, Relu) runs on the registers before
// the one store. Nothing is packed, so nothing is allocated or copied per call.
#include "backends/cpu/conv/tap_gemm_cpu.h"
#include "backends/cpu/runtime/cpu_features.h"

#include <algorithm>
#include <utility>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DNNX_TAP_GEMM_AVX2 1
#endif

namespace dnnx {

namespace {

constexpr int kLanes = 8;       // floats in one AVX register
constexpr int kMaxVectors = 3;  // a tile's vectors
constexpr int kMaxRows = 6;     // a panel's rows: MR * NV sums and the loads fit 16 registers
constexpr int kWideLanes = 16;      // floats in one AVX-512 register
constexpr int kMaxWideVectors = 4;  // MR * NV <= 24 sums, NV loads and a broadcast in 32 registers

// What a tile's function needs besides the tile: one panel.
struct PanelArgs {
  const float* a;         // the panel's first row of A [M, k]
  const float* b;
  const int32_t* taps;    // [k]
  int64_t k;
  int rows;               // the panel's rows (<= MR: the last panel may be short)
  const float* bias;      // [rows] or null
  const float* residual;  // the panel's first row of Z [M, ldz], or null
  int64_t ldz;
  bool relu;
  float* c;               // the panel's first row of C [M, ldc]
  int64_t ldc;
};

// The epilogue of one output (the scalar path): apply_conv_epilogue's order.
inline float epilogue(const PanelArgs& p, int r, float sum, const float* z) {
  if (p.bias) sum += p.bias[r];
  if (z) sum += *z;
  if (p.relu) sum = sum < 0.0f ? 0.0f : sum;  // NaN passes through
  return sum;
}

// The same sums without vectors, for a CPU without AVX2 and FMA.
void panel_scalar(const PanelArgs& p, const TapTile& t) {
  for (int r = 0; r < p.rows; ++r) {
    const float* a = p.a + r * p.k;
    for (int v = 0; v < t.vectors; ++v) {
      for (int i = 0; i < t.lanes[v]; ++i) {
        float sum = 0.0f;
        const float* b = p.b + t.in[v] + i;
        for (int64_t k = 0; k < p.k; ++k) sum += a[k] * b[p.taps[k]];
        const int64_t at = r * p.ldc + t.out[v] + i;
        p.c[at] = epilogue(p, r, sum, p.residual ? p.residual + r * p.ldz + t.out[v] + i : nullptr);
      }
    }
  }
}

#ifdef DNNX_TAP_GEMM_AVX2
using TileFn = void (*)(const PanelArgs&, const TapTile&);

// Every loop over r and v is unrolled so that the sums live in registers: a rolled loop indexes
// `acc` and puts it on the stack, stored at every k (2.5x slower on LeNet's conv2).
#define DNNX_UNROLL _Pragma("GCC unroll 8")

// MR rows x NV vectors; kTail: the last vector is short (t.lanes < 8), loaded and stored under
// a mask so that nothing past the run's end is touched.
template <int MR, int NV, bool kTail>
__attribute__((target("avx2,fma"))) void tile_avx2(const PanelArgs& p, const TapTile& t) {
  const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(kTail ? t.lanes[NV - 1] : kLanes),
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const int rows = p.rows;
  const int64_t taps = p.k;  // locals: p's fields could alias what the loop stores
  const int32_t* tap_offsets = p.taps;
  const float* ar[MR];
  DNNX_UNROLL for (int r = 0; r < MR; ++r) ar[r] = p.a + std::min(r, rows - 1) * taps;  // a short panel repeats its last row
  const float* bv[NV];
  DNNX_UNROLL for (int v = 0; v < NV; ++v) bv[v] = p.b + t.in[v];
  __m256 acc[MR][NV];
  DNNX_UNROLL for (int r = 0; r < MR; ++r) {
    DNNX_UNROLL for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_setzero_ps();
  }
  for (int64_t k = 0; k < taps; ++k) {
    const int32_t tap = tap_offsets[k];
    __m256 b[NV];
    DNNX_UNROLL for (int v = 0; v < NV; ++v) {
      b[v] = kTail && v == NV - 1 ? _mm256_maskload_ps(bv[v] + tap, mask) : _mm256_loadu_ps(bv[v] + tap);
    }
    DNNX_UNROLL for (int r = 0; r < MR; ++r) {
      const __m256 a = _mm256_broadcast_ss(ar[r] + k);
      DNNX_UNROLL for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_fmadd_ps(a, b[v], acc[r][v]);
    }
  }
  // apply_conv_epilogue's order: (sum + b) + z, then Relu (NaN passes through: max(0, NaN) is
  // NaN with the operands this way round).
  const __m256 zero = _mm256_setzero_ps();
  DNNX_UNROLL for (int r = 0; r < MR; ++r) {
    if (r >= rows) break;
    float* c = p.c + r * p.ldc;
    const float* z = p.residual ? p.residual + r * p.ldz : nullptr;
    const __m256 bias = _mm256_set1_ps(p.bias ? p.bias[r] : 0.0f);
    DNNX_UNROLL for (int v = 0; v < NV; ++v) {
      const bool tail = kTail && v == NV - 1;
      __m256 s = acc[r][v];
      if (p.bias) s = _mm256_add_ps(s, bias);
      if (z) s = _mm256_add_ps(s, tail ? _mm256_maskload_ps(z + t.out[v], mask) : _mm256_loadu_ps(z + t.out[v]));
      if (p.relu) s = _mm256_max_ps(zero, s);
      if (tail) {
        _mm256_maskstore_ps(c + t.out[v], mask, s);
      } else {
        _mm256_storeu_ps(c + t.out[v], s);
      }
    }
  }
}

template <int MR>
TileFn tile_fn(int vectors, bool tail) {
  switch (vectors) {
    case 1: return tail ? tile_avx2<MR, 1, true> : tile_avx2<MR, 1, false>;
    case 2: return tail ? tile_avx2<MR, 2, true> : tile_avx2<MR, 2, false>;
    default: return tail ? tile_avx2<MR, 3, true> : tile_avx2<MR, 3, false>;
  }
}

TileFn tile_fn(int64_t rows, int vectors, bool tail) {
  switch (rows) {
    case 1: return tile_fn<1>(vectors, tail);
    case 2: return tile_fn<2>(vectors, tail);
    case 3: return tile_fn<3>(vectors, tail);
    case 4: return tile_fn<4>(vectors, tail);
    case 5: return tile_fn<5>(vectors, tail);
    default: return tile_fn<6>(vectors, tail);
  }
}

// Note [tap gemm in avx512]
// The direct conv's rows are short: LeNet-5's conv2 writes rows of 10 outputs, two 8-wide
// vectors (one of 2 lanes) that close a tile, so each tap loaded 2 vectors and broadcast 4
// filter weights for 8 FMAs over 40 outputs. Here the vectors are 16 wide, each masked to its
// own lanes, and a tile takes up to 4 of them whatever their widths: rows of 10 are one masked
// vector each, 4 rows a tile, 16 FMAs per tap over 160 outputs. Each output is still summed
// over k in order in one lane, with FMA, so the results are the bits of the AVX2 tile's.
// Measured on this project's Xeon (1 thread), LeNet-5 at batch 10: conv1 (28 wide, padded)
// 34 -> 22 us, conv2 (10 wide) 90 -> 54 us (onnxruntime 56 and 47 in its own profile).
template <int MR, int NV>
__attribute__((target("avx512f"))) void tile_avx512(const PanelArgs& p, const TapTile& t) {
  __mmask16 mask[NV];
  DNNX_UNROLL for (int v = 0; v < NV; ++v) mask[v] = static_cast<__mmask16>((1u << t.lanes[v]) - 1u);
  const int rows = p.rows;
  const int64_t taps = p.k;
  const int32_t* tap_offsets = p.taps;
  const float* ar[MR];
  DNNX_UNROLL for (int r = 0; r < MR; ++r) ar[r] = p.a + std::min(r, rows - 1) * taps;
  const float* bv[NV];
  DNNX_UNROLL for (int v = 0; v < NV; ++v) bv[v] = p.b + t.in[v];
  __m512 acc[MR][NV];
  DNNX_UNROLL for (int r = 0; r < MR; ++r) {
    DNNX_UNROLL for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
  }
  for (int64_t k = 0; k < taps; ++k) {
    const int32_t tap = tap_offsets[k];
    __m512 b[NV];
    DNNX_UNROLL for (int v = 0; v < NV; ++v) b[v] = _mm512_maskz_loadu_ps(mask[v], bv[v] + tap);
    DNNX_UNROLL for (int r = 0; r < MR; ++r) {
      const __m512 a = _mm512_set1_ps(ar[r][k]);
      DNNX_UNROLL for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(a, b[v], acc[r][v]);
    }
  }
  // The AVX2 tile's epilogue: (sum + b) + z, then Relu (max(0, NaN) is NaN this way round).
  const __m512 zero = _mm512_setzero_ps();
  DNNX_UNROLL for (int r = 0; r < MR; ++r) {
    if (r >= rows) break;
    float* c = p.c + r * p.ldc;
    const float* z = p.residual ? p.residual + r * p.ldz : nullptr;
    const __m512 bias = _mm512_set1_ps(p.bias ? p.bias[r] : 0.0f);
    DNNX_UNROLL for (int v = 0; v < NV; ++v) {
      __m512 s = acc[r][v];
      if (p.bias) s = _mm512_add_ps(s, bias);
      if (z) s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(mask[v], z + t.out[v]));
      // (the masked form: GCC warns of the unmasked one's undefined source register)
      if (p.relu) s = _mm512_mask_max_ps(s, static_cast<__mmask16>(0xFFFF), zero, s);
      _mm512_mask_storeu_ps(c + t.out[v], mask[v], s);
    }
  }
}

template <int MR>
TileFn wide_tile_fn(int vectors) {
  switch (vectors) {
    case 1: return tile_avx512<MR, 1>;
    case 2: return tile_avx512<MR, 2>;
    case 3: return tile_avx512<MR, 3>;
    default: return tile_avx512<MR, 4>;
  }
}

TileFn wide_tile_fn(int64_t rows, int vectors) {
  switch (rows) {
    case 1: return wide_tile_fn<1>(vectors);
    case 2: return wide_tile_fn<2>(vectors);
    case 3: return wide_tile_fn<3>(vectors);
    case 4: return wide_tile_fn<4>(vectors);
    case 5: return wide_tile_fn<5>(vectors);
    default: return wide_tile_fn<6>(vectors);
  }
}
#endif

}  // namespace

void TapTileBuilder::add_run(int64_t in, int64_t out, int64_t width) {
  for (int64_t col = 0; col < width; col += lanes_) {
    const int v = open_.vectors++;
    open_.in[v] = static_cast<int32_t>(in + col);
    open_.out[v] = static_cast<int32_t>(out + col);
    open_.lanes[v] = static_cast<int32_t>(std::min<int64_t>(lanes_, width - col));
    if (open_.vectors == max_vectors_ || (lanes_ == kLanes && open_.lanes[v] < kLanes)) {
      tiles_.push_back(open_);
      open_ = TapTile{};
    }
  }
}

std::vector<TapTile> TapTileBuilder::finish() {
  if (open_.vectors > 0) tiles_.push_back(open_);
  open_ = TapTile{};
  return std::move(tiles_);
}

bool tap_gemm_avx512() {
#ifdef DNNX_TAP_GEMM_AVX2
  static const bool has = tap_gemm_vectorized() && __builtin_cpu_supports("avx512f");
  return has;
#else
  return false;
#endif
}

bool tap_gemm_vectorized() {
#ifdef DNNX_TAP_GEMM_AVX2
  return cpu_has_avx2_fma();
#else
  return false;
#endif
}

// The panel height that wastes the fewest padded rows (ties: the taller); all rows up to 6.
// LeNet: 20 and 50 filters -> 5; an LSTM's 16-row batch block -> 4.
int64_t TapGemm::panel_rows(int64_t rows) {
  if (rows <= kMaxRows) return std::max<int64_t>(rows, 1);
  int64_t best = kMaxRows, best_waste = kMaxRows;
  for (int64_t mr = kMaxRows; mr >= 4; --mr) {
    const int64_t waste = (rows + mr - 1) / mr * mr - rows;
    if (waste < best_waste) best = mr, best_waste = waste;
  }
  return best;
}

// As many vectors as keep MR * NV sums within 12 registers (16-wide: 24 of the 32).
int TapGemm::max_vectors(int64_t rows, int lanes) {
  if (lanes == kWideLanes) return static_cast<int>(std::min<int64_t>(kMaxWideVectors, 24 / panel_rows(rows)));
  return static_cast<int>(std::min<int64_t>(kMaxVectors, 12 / panel_rows(rows)));
}

TapGemm::TapGemm(int64_t rows, std::vector<int32_t> taps, std::vector<TapTile> tiles, int lanes)
    : rows_(rows), panel_rows_(panel_rows(rows)), panels_((rows + panel_rows_ - 1) / panel_rows_), lanes_(lanes),
      taps_(std::move(taps)), tiles_(std::move(tiles)) {}

void TapGemm::run(const float* a, const float* b, const ConvEpilogue& e, float* c, int64_t ldc, int64_t ldz,
                  int64_t panel_begin, int64_t panel_end) const {
  const int64_t k = static_cast<int64_t>(taps_.size());
  const bool vectorized = lanes_ == kWideLanes ? tap_gemm_avx512() : tap_gemm_vectorized();
  for (int64_t panel = panel_begin; panel < panel_end; ++panel) {
    const int64_t m0 = panel * panel_rows_;
    PanelArgs p;
    p.a = a + m0 * k;
    p.b = b;
    p.taps = taps_.data();
    p.k = k;
    p.rows = static_cast<int>(std::min(panel_rows_, rows_ - m0));
    p.bias = e.bias ? e.bias + m0 : nullptr;
    p.residual = e.residual ? e.residual + m0 * ldz : nullptr;
    p.ldz = ldz;
    p.relu = e.relu;
    p.c = c + m0 * ldc;
    p.ldc = ldc;
    for (const TapTile& t : tiles_) {
#ifdef DNNX_TAP_GEMM_AVX2
      if (vectorized) {
        if (lanes_ == kWideLanes) {
          wide_tile_fn(panel_rows_, t.vectors)(p, t);
        } else {
          tile_fn(panel_rows_, t.vectors, t.lanes[t.vectors - 1] < kLanes)(p, t);
        }
        continue;
      }
#endif
      panel_scalar(p, t);
    }
  }
  (void)vectorized;
}

// Note [tap panels]
// An LSTM step's product H [rows, H] · R^T [H, 4H] read R^T as it lies: a tile's 3 vectors of
// columns are 96 bytes of each of its K rows, 16 KB apart at hidden 128 (4H = 512), and with R^T
// (256 KB) in L2 only, every k's loads went to L2 at that stride. Packed into panels of the tile's
// width, a tile's K rows of B are one contiguous stream (measured: Note [lstm step panels] in
// lstm_cpu.cc).
int64_t tap_panel_floats(int64_t n, int64_t k, int64_t width) { return (n + width - 1) / width * k * width; }

void pack_tap_panels(const float* b, int64_t n, int64_t k, int64_t width, float* packed) {
  for (int64_t col = 0; col < n; col += width, packed += k * width) {
    const int64_t w = std::min(width, n - col);
    for (int64_t kk = 0; kk < k; ++kk) std::copy(b + kk * n + col, b + kk * n + col + w, packed + kk * width);
  }
}

TapGemm panel_tap_gemm(int64_t m, int64_t n, int64_t k, int vectors) {
  const int64_t width = int64_t{kLanes} * vectors;
  std::vector<int32_t> taps;
  for (int64_t i = 0; i < k; ++i) taps.push_back(static_cast<int32_t>(i * width));
  TapTileBuilder tiles(vectors);
  // A panel is one tile (its last, narrower one closes at its short vector or at finish()).
  for (int64_t col = 0; col < n; col += width) tiles.add_run(col / width * k * width, col, std::min(width, n - col));
  return TapGemm(m, std::move(taps), tiles.finish());
}

TapGemm dense_tap_gemm(int64_t m, int64_t n, int64_t k) {
  std::vector<int32_t> taps;
  for (int64_t i = 0; i < k; ++i) taps.push_back(static_cast<int32_t>(i * n));
  TapTileBuilder tiles(TapGemm::max_vectors(m));
  tiles.add_run(0, 0, n);
  return TapGemm(m, std::move(taps), tiles.finish());
}

}  // namespace dnnx
