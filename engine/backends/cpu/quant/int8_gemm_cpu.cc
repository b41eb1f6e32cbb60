// Note [int8 gemm paths] (int8_gemm_cpu.h). Layouts:
//   vnni  W [M/8][K/4][8 rows][4 k] int8; a B panel of 32 columns [K/4][32][4] uint8: one zmm
//         holds 16 columns x 4 k, and vpdpbusd with a row's 4 broadcast weights adds 4
//         products to each column's int32 sum. 8 rows x 32 columns = 16 zmm accumulators.
//   avx-vnni  as vnni on ymm (VEX vpdpbusd, CPUs without AVX-512): W [M/6][K/4][6][4] int8, B panels
//         of 16 columns [K/4][16][4], 6 x 16 = 12 ymm sums.
//   avx2  W [M/6][K/2][6 rows][2 k] int16; a B panel of 16 columns [K/2][16][2] uint8, widened
//         to int16 per step: vpmaddwd with a row's 2 broadcast weights. 6 x 16 = 12 ymm sums.
// Rows past M and k past K are zero weights; columns past N are computed and not stored.
#include "backends/cpu/quant/int8_gemm_cpu.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "backends/cpu/quant/int_gemm_cpu.h"
#include "backends/cpu/quant/int8_amx_cpu.h"
#include "backends/cpu/quant/int8_vnni_tile_cpu.h"
#include "backends/cpu/runtime/thread_pool.h"

namespace dnnx {

namespace {

constexpr int64_t kAvx2Rows = 6, kAvx2Cols = 16, kAvx2K = 2;
constexpr int64_t kAvxVnniRows = 6, kAvxVnniCols = 16, kAvxVnniK = 4;
// Note [int8 amx]: 2 x 2 tiles of 16 x 16, W's k padded to whole 64-byte tile rows.
constexpr int64_t kAmxRows = 32, kAmxCols = 32, kAmxK = 4, kAmxTileK = 64;

// A path's tile: rows of W, columns of B, k per group; int8 weights (the VNNI kinds) or int16.
struct PathShape {
  int64_t rows, cols, kg;
  bool bytes;
};

PathShape shape_of(Int8Path path) {
  switch (path) {
    case Int8Path::Vnni: return {kVnniRows, kVnniCols, kVnniK, true};
    case Int8Path::AvxVnni: return {kAvxVnniRows, kAvxVnniCols, kAvxVnniK, true};
    case Int8Path::Amx: return {kAmxRows, kAmxCols, kAmxK, true};
    default: return {kAvx2Rows, kAvx2Cols, kAvx2K, false};
  }
}

int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

// K as a path's packed W and B panels hold it: whole k groups, and for AMX whole tile rows.
int64_t padded_k(Int8Path path, int64_t k) {
  return path == Int8Path::Amx ? round_up(k, kAmxTileK) : round_up(k, shape_of(path).kg);
}

// Note [int8 amx]: the tile configuration on this thread while a GEMM runs on it.
class AmxScope {
 public:
  explicit AmxScope(bool on) : on_(on) {
    if (on_) amx_begin();
  }
  ~AmxScope() {
    if (on_) amx_end();
  }
  AmxScope(const AmxScope&) = delete;
  AmxScope& operator=(const AmxScope&) = delete;

 private:
  bool on_;
};

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

int32_t weight_at(const void* w, bool is_signed, int64_t i) {
  return is_signed ? static_cast<const int8_t*>(w)[i] : static_cast<const uint8_t*>(w)[i];
}

// ---- packing B (per run) ----

// One panel of `cols` columns from j0, k grouped by `kg`, uint8 (int8 shifted by 128); k past K
// and columns past N hold `pad`.
void pack_panel_generic(const uint8_t* src, uint8_t flip, int64_t k, int64_t ld_k, int64_t ld_n, int64_t j0,
                        int64_t cols, int64_t width, int64_t kg, uint8_t pad, int64_t p_first, uint8_t* dst) {
  const int64_t kp = round_up(k, kg);
  dst += p_first * width;
  for (int64_t p0 = p_first; p0 < kp; p0 += kg) {
    for (int64_t j = 0; j < width; ++j) {
      for (int64_t t = 0; t < kg; ++t) {
        const int64_t p = p0 + t;
        *dst++ = p < k && j < cols ? static_cast<uint8_t>(src[p * ld_k + (j0 + j) * ld_n] ^ flip) : pad;
      }
    }
  }
}

// Rows contiguous in B (ld_n == 1), a whole panel: the k groups interleaved 16 columns at a
// time with SSE2 unpacks (4 rows -> [16][4] bytes, or 2 rows -> [16][2]), a last 8 as 8.
void pack_panel_rows(const uint8_t* src, uint8_t flip, int64_t k, int64_t ld_k, int64_t j0, int64_t width,
                     int64_t kg, uint8_t* dst) {
  const __m128i f = _mm_set1_epi8(static_cast<char>(flip));
  auto row = [&](int64_t p, int64_t j) {
    return _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + p * ld_k + j0 + j)), f);
  };
  auto half = [&](int64_t p, int64_t j) {  // 8 columns (a panel of 8: Note [vnni column tails])
    return _mm_xor_si128(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + p * ld_k + j0 + j)), f);
  };
  const int64_t full = k / kg * kg, wide = width / 16 * 16;
  for (int64_t p0 = 0; p0 < full; p0 += kg) {
    if (wide < width) {  // the last 8 columns: [8][kg] bytes
      auto* out = reinterpret_cast<__m128i*>(dst + (p0 / kg) * width * kg + wide * kg);
      if (kg == 4) {
        const __m128i lo01 = _mm_unpacklo_epi8(half(p0, wide), half(p0 + 1, wide));
        const __m128i lo23 = _mm_unpacklo_epi8(half(p0 + 2, wide), half(p0 + 3, wide));
        _mm_storeu_si128(out, _mm_unpacklo_epi16(lo01, lo23));
        _mm_storeu_si128(out + 1, _mm_unpackhi_epi16(lo01, lo23));
      } else {
        _mm_storeu_si128(out, _mm_unpacklo_epi8(half(p0, wide), half(p0 + 1, wide)));
      }
    }
    for (int64_t j = 0; j < wide; j += 16) {
      auto* out = reinterpret_cast<__m128i*>(dst + (p0 / kg) * width * kg + j * kg);
      if (kg == 4) {
        const __m128i r0 = row(p0, j), r1 = row(p0 + 1, j), r2 = row(p0 + 2, j), r3 = row(p0 + 3, j);
        const __m128i lo01 = _mm_unpacklo_epi8(r0, r1), hi01 = _mm_unpackhi_epi8(r0, r1);
        const __m128i lo23 = _mm_unpacklo_epi8(r2, r3), hi23 = _mm_unpackhi_epi8(r2, r3);
        _mm_storeu_si128(out, _mm_unpacklo_epi16(lo01, lo23));
        _mm_storeu_si128(out + 1, _mm_unpackhi_epi16(lo01, lo23));
        _mm_storeu_si128(out + 2, _mm_unpacklo_epi16(hi01, hi23));
        _mm_storeu_si128(out + 3, _mm_unpackhi_epi16(hi01, hi23));
      } else {
        const __m128i r0 = row(p0, j), r1 = row(p0 + 1, j);
        _mm_storeu_si128(out, _mm_unpacklo_epi8(r0, r1));
        _mm_storeu_si128(out + 1, _mm_unpackhi_epi8(r0, r1));
      }
    }
  }
}

void pack_panel(const void* b, bool b_signed, int64_t k, int64_t ld_k, int64_t ld_n, int64_t j0, int64_t cols,
                int64_t width, int64_t kg, uint8_t pad, uint8_t* dst) {
  const auto* src = static_cast<const uint8_t*>(b);
  const uint8_t flip = b_signed ? 0x80 : 0;
  if (ld_n == 1 && cols == width) {
    pack_panel_rows(src, flip, k, ld_k, j0, width, kg, dst);
    pack_panel_generic(src, flip, k, ld_k, ld_n, j0, cols, width, kg, pad, k / kg * kg, dst);  // the k tail
    return;
  }
  if (ld_n == 1) {  // the last, narrower panel: its rows copied out to full width (pad after), then as above
    thread_local std::vector<uint8_t> rows;
    rows.resize(static_cast<size_t>(k * width));
    const uint8_t raw_pad = static_cast<uint8_t>(pad ^ flip);  // pack_panel_rows flips again
    for (int64_t p = 0; p < k; ++p) {
      std::memcpy(rows.data() + p * width, src + p * ld_k + j0, static_cast<size_t>(cols));
      std::memset(rows.data() + p * width + cols, raw_pad, static_cast<size_t>(width - cols));
    }
    pack_panel(rows.data(), b_signed, k, width, 1, 0, width, width, kg, pad, dst);
    return;
  }
  pack_panel_generic(src, flip, k, ld_k, ld_n, j0, cols, width, kg, pad, 0, dst);
}

// ---- the micro kernels: rows [m0, m0 + R) x one panel ----

// Named accumulators, not an array: GCC kept an array's sums moving between registers every
// step (the VNNI kernels: int8_vnni_tile_cpu.cc).

#define DNNX_AVX2_ROW(r, c0, c1)                                        \
  {                                                                     \
    int32_t two;                                                        \
    std::memcpy(&two, wk + (r) * 2, 4);                                 \
    const __m256i w = _mm256_set1_epi32(two);                           \
    c0 = _mm256_add_epi32(c0, _mm256_madd_epi16(b0, w));                \
    c1 = _mm256_add_epi32(c1, _mm256_madd_epi16(b1, w));                \
  }

__attribute__((target("avx2"))) void tile_avx2(const int16_t* wp, const uint8_t* bp, int64_t k2, int32_t* out) {
  __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00,
          c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  for (int64_t p = 0; p < k2; ++p) {
    const __m256i b0 = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bp + p * 32)));
    const __m256i b1 = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bp + p * 32 + 16)));
    const int16_t* wk = wp + p * kAvx2Rows * 2;
    DNNX_AVX2_ROW(0, c00, c01)
    DNNX_AVX2_ROW(1, c10, c11)
    DNNX_AVX2_ROW(2, c20, c21)
    DNNX_AVX2_ROW(3, c30, c31)
    DNNX_AVX2_ROW(4, c40, c41)
    DNNX_AVX2_ROW(5, c50, c51)
  }
  const __m256i sums[12] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51};
  for (int i = 0; i < 12; ++i) _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * i), sums[i]);
}
#undef DNNX_AVX2_ROW

// AVX-VNNI (VEX vpdpbusd on ymm, CPUs without AVX-512): 6 rows x 16 columns, B [K/4][16][4].
#define DNNX_AVXVNNI_ROW(r, c0, c1)                                     \
  {                                                                     \
    int32_t four;                                                       \
    std::memcpy(&four, wk + (r) * 4, 4);                                \
    const __m256i w = _mm256_set1_epi32(four);                          \
    c0 = _mm256_dpbusd_avx_epi32(c0, b0, w);                            \
    c1 = _mm256_dpbusd_avx_epi32(c1, b1, w);                            \
  }

__attribute__((target("avx2,avxvnni"))) void tile_avx_vnni(const int8_t* wp, const uint8_t* bp, int64_t k4,
                                                           int32_t* out) {
  __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00,
          c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  for (int64_t p = 0; p < k4; ++p) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp + p * 64));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp + p * 64 + 32));
    const int8_t* wk = wp + p * kAvxVnniRows * 4;
    DNNX_AVXVNNI_ROW(0, c00, c01)
    DNNX_AVXVNNI_ROW(1, c10, c11)
    DNNX_AVXVNNI_ROW(2, c20, c21)
    DNNX_AVXVNNI_ROW(3, c30, c31)
    DNNX_AVXVNNI_ROW(4, c40, c41)
    DNNX_AVXVNNI_ROW(5, c50, c51)
  }
  const __m256i sums[12] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51};
  for (int i = 0; i < 12; ++i) _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * i), sums[i]);
}
#undef DNNX_AVXVNNI_ROW

// The tile's sums, less b_zp x rowsum, in place, then to the sink (rows < M, columns < N only).
void finish_tile(int32_t* tile, int64_t rows, int64_t cols, int64_t width, const Int8Weights& w, int64_t m0,
                 int64_t j0, int32_t b_zp, bool corrected, const Int8TileSink& sink) {
  for (int64_t r = 0; r < rows && corrected; ++r) {
    // modular int32 arithmetic, as the vector sums: the exact value wherever it fits int32
    const auto fix = static_cast<uint32_t>(b_zp) * static_cast<uint32_t>(w.row_sums[m0 + r]);
    int32_t* row = tile + r * width;
    for (int64_t j = 0; j < cols; ++j) row[j] = static_cast<int32_t>(static_cast<uint32_t>(row[j]) - fix);
  }
  sink(m0, rows, j0, cols, tile, width);
}

// B's panels: Note [vnni split tails] on the VNNI path, else n / cols rounded up of the path's width.
int64_t panel_count(Int8Path path, int64_t n) {
  return path == Int8Path::Vnni ? vnni_panel_count(n) : (n + shape_of(path).cols - 1) / shape_of(path).cols;
}

// Note [int8 panel order]: B is packed a chunk of panels at a time (about kChunkBytes: it stays in
// L2), then each row tile of W runs over the chunk's panels. The sink then gets one row tile's
// tiles left to right: the epilogue reads z and writes Y along each output row (a few streams
// the prefetchers follow), where panel-outer order wrote 32 bytes into each of M rows, M apart
// (a residual 1x1 conv on 56x56 waited on those lines: 0.77 ms, now ~0.4). Packing B whole
// first costs nothing more: the scratch holds every panel already. (Cutting K into L1-sized
// blocks, tried before this, changed nothing measurable: B streams well from L2.)
constexpr int64_t kChunkBytes = 256 * 1024;

// A source's chunk: at least kMinSourcePanels panels (each call's fixed costs: an im2col
// segment per output row).
constexpr int64_t kMinSourcePanels = 4;

void gemm_panels(const Int8Weights& w, const void* b, const Int8ColumnSource* source, bool b_signed, int32_t b_zp,
                 int64_t n, int64_t ld_k, int64_t ld_n, const Int8TileSink& sink, bool corrected, uint8_t* scratch,
                 int64_t first, int64_t last, int64_t m_first = 0, int64_t m_last = -1) {
  const PathShape ps = shape_of(w.path);
  const int64_t width = ps.cols, kg = ps.kg, row_tile = ps.rows;
  const int64_t kp = padded_k(w.path, w.k), kg_rows = round_up(w.k, kg);  // the packer writes kg_rows
  const uint8_t pad = static_cast<uint8_t>(b_signed ? b_zp + 128 : b_zp);
  int64_t chunk = std::max<int64_t>(1, kChunkBytes / (kp * width));
  if (source) chunk = std::max(chunk, kMinSourcePanels);
  thread_local std::vector<uint8_t> columns;  // a source's columns [K][chunk * width]
  // Notes [vnni column tails], [vnni split tails]: the VNNI path's last panels only as wide as they must be
  auto panel_at = [&](int64_t panel) {
    return w.path == Int8Path::Vnni ? vnni_panel(n, panel) : VnniPanel{panel * width, width};
  };
  alignas(64) int32_t tile[kAmxRows * kAmxCols];
  const AmxScope amx(w.path == Int8Path::Amx);
  for (int64_t c0 = first; c0 < last; c0 += chunk) {
    const int64_t c1 = std::min(last, c0 + chunk);
    const uint8_t* from = static_cast<const uint8_t*>(b);
    int64_t from_ld = ld_k, base = 0;  // B's column j at from + (j - base) * ld_n
    if (source) {
      const VnniPanel last_panel = panel_at(c1 - 1);
      const int64_t j1 = std::min(n, last_panel.j0 + last_panel.width);
      base = panel_at(c0).j0;
      from_ld = j1 - base;
      columns.resize(static_cast<size_t>(w.k * from_ld));
      (*source)(base, j1, columns.data(), from_ld);
      from = columns.data();
    }
    for (int64_t panel = c0; panel < c1; ++panel) {
      const auto [j0, pw] = panel_at(panel);
      uint8_t* dst = scratch + j0 * kp;
      pack_panel(from, b_signed, w.k, from_ld, ld_n, j0 - base, std::min(pw, n - j0), pw, kg, pad, dst);
      if (kp > kg_rows) std::memset(dst + kg_rows * pw, pad, static_cast<size_t>((kp - kg_rows) * pw));
    }
    for (int64_t m0 = m_first; m0 < (m_last < 0 ? w.m : std::min(m_last, w.m)); m0 += row_tile) {
      const int64_t rows = std::min(row_tile, w.m - m0);
      for (int64_t panel = c0; panel < c1; ++panel) {
        const auto [j0, pw] = panel_at(panel);
        const int64_t cols = std::min(pw, n - j0);
        const uint8_t* bp = scratch + j0 * kp;
        if (w.path == Int8Path::Amx) {  // two 16-row groups of W, [K/64][16][64] each
          const int8_t* w0 = w.s8.data() + m0 * kp;
          amx_tile_32x32(w0, w0 + 16 * kp, bp, kp / kAmxTileK, tile);
        } else if (w.path == Int8Path::Vnni) {
          vnni_tile(pw, w.s8.data() + m0 * kp, bp, kp / kg, tile);
        } else if (w.path == Int8Path::AvxVnni) {
          tile_avx_vnni(w.s8.data() + m0 * kp, bp, kp / kg, tile);
        } else {
          tile_avx2(w.s16.data() + m0 * kp, bp, kp / kg, tile);
        }
        finish_tile(tile, rows, cols, pw, w, m0, j0, b_signed ? b_zp + 128 : b_zp, corrected, sink);
      }
    }
  }
}

// Note [int8 row split]: the workers split B's panels, each packing its own; with few panels
// they cannot share them evenly (ResNet-50's layer4: 49 columns, panels of 32, 16 and 8: one
// worker computed 32 columns while the other did 24, and a GEMM of one panel ran on one
// worker). So where there are at most two panels a worker and at least two row tiles of W a
// worker, the workers split W's row tiles instead, each packing all of B into a buffer of its
// own (B is small there: K x 56 bytes against W's K x M). The tiles are the same sums either way.
void gemm_row_split(const Int8Weights& w, const void* b, const Int8ColumnSource* source, bool b_signed, int32_t b_zp,
                    int64_t n, int64_t ld_k, int64_t ld_n, const Int8TileSink& sink, bool corrected, int64_t panels,
                    int workers) {
  const int64_t row_tile = shape_of(w.path).rows, tiles = (w.m + row_tile - 1) / row_tile;
  const size_t bytes = int8_gemm_scratch_bytes(w, n);
  // one even share of the row tiles a worker (the pool's finer ranges would pack B once each)
  cpu_thread_pool().parallel_for(
      workers, [&](int64_t first, int64_t last, int) {
        thread_local std::vector<uint8_t> own;
        if (own.size() < bytes) own.resize(bytes);
        for (int64_t share = first; share < last; ++share) {
          gemm_panels(w, b, source, b_signed, b_zp, n, ld_k, ld_n, sink, corrected, own.data(), 0, panels,
                      tiles * share / workers * row_tile, tiles * (share + 1) / workers * row_tile);
        }
      },
      workers);
}

bool row_split_pays(const Int8Weights& w, int64_t panels, int workers) {
  const int64_t tiles = (w.m + shape_of(w.path).rows - 1) / shape_of(w.path).rows;
  return workers > 1 && panels <= 2 * workers && tiles >= 2 * workers;
}

// Note [int8 gemv]: a GEMM of one to kGemvColumns columns (a classifier's Gemm at batch 1: W
// 1000 x 2048, B one column) filled a 32-column panel with 1 real column: 32 times the work,
// 0.43 ms where onnxruntime takes 0.19. The VNNI path then runs it as W x b directly: a zmm of
// W's packed rows is two k groups of the 8 rows of a row tile ([K/4][8][4]), so b's column is
// expanded once into zmms of the matching 4-byte groups (k 4p..4p+3 in lanes 0-7, the next four
// in lanes 8-15) and each vpdpbusd adds 64 products; the lane halves are summed at the end. Exact
// int32 sums as every path; W streams once per column.
constexpr int64_t kGemvColumns = 3;

__attribute__((target("avx512f,avx512bw,avx512vnni"))) void gemv_vnni(const Int8Weights& w, const uint8_t* bexp,
                                                                       int64_t t0, int64_t t1, int32_t* sums) {
  const int64_t kp = round_up(w.k, kVnniK), steps = kp / 8;  // kp / 4 k groups, two per zmm
  const bool odd = (kp / 4) % 2 != 0;                          // a last lone k group: its zmm's upper half
  int64_t t = t0;
  for (; t + 2 <= t1; t += 2) {  // two row tiles at a time: four independent sums
    const int8_t* w0 = w.s8.data() + t * kVnniRows * kp;
    const int8_t* w1 = w0 + kVnniRows * kp;
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, c0 = a0, c1 = a0;
    int64_t p = 0;
    for (; p + 2 <= steps; p += 2) {
      const __m512i b0 = _mm512_loadu_si512(bexp + p * 64), b1 = _mm512_loadu_si512(bexp + p * 64 + 64);
      a0 = _mm512_dpbusd_epi32(a0, b0, _mm512_loadu_si512(w0 + p * 64));
      a1 = _mm512_dpbusd_epi32(a1, b1, _mm512_loadu_si512(w0 + p * 64 + 64));
      c0 = _mm512_dpbusd_epi32(c0, b0, _mm512_loadu_si512(w1 + p * 64));
      c1 = _mm512_dpbusd_epi32(c1, b1, _mm512_loadu_si512(w1 + p * 64 + 64));
    }
    for (; p < steps + (odd ? 1 : 0); ++p) {
      const __mmask64 m = p < steps ? ~__mmask64{0} : __mmask64{0xFFFFFFFF};  // the lone group: its 32 bytes
      const __m512i b0 = _mm512_maskz_loadu_epi8(m, bexp + p * 64);
      a0 = _mm512_dpbusd_epi32(a0, b0, _mm512_maskz_loadu_epi8(m, w0 + p * 64));
      c0 = _mm512_dpbusd_epi32(c0, b0, _mm512_maskz_loadu_epi8(m, w1 + p * 64));
    }
    const __m512i a = _mm512_add_epi32(a0, a1), c = _mm512_add_epi32(c0, c1);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums + t * 8),
                        _mm256_add_epi32(_mm512_castsi512_si256(a), _mm512_extracti64x4_epi64(a, 1)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums + t * 8 + 8),
                        _mm256_add_epi32(_mm512_castsi512_si256(c), _mm512_extracti64x4_epi64(c, 1)));
  }
  for (; t < t1; ++t) {
    const int8_t* w0 = w.s8.data() + t * kVnniRows * kp;
    __m512i a0 = _mm512_setzero_si512();
    for (int64_t p = 0; p < steps + (odd ? 1 : 0); ++p) {
      const __mmask64 m = p < steps ? ~__mmask64{0} : __mmask64{0xFFFFFFFF};
      a0 = _mm512_dpbusd_epi32(a0, _mm512_maskz_loadu_epi8(m, bexp + p * 64), _mm512_maskz_loadu_epi8(m, w0 + p * 64));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(sums + t * 8),
                        _mm256_add_epi32(_mm512_castsi512_si256(a0), _mm512_extracti64x4_epi64(a0, 1)));
  }
}

// Note [int8 gemv]'s driver: column by column, C's rows handed to the sink a row tile at a time.
void gemv_columns(const Int8Weights& w, const void* b, bool b_signed, int32_t b_zp, int64_t n, int64_t ld_k,
                  int64_t ld_n, const Int8TileSink& sink, bool corrected) {
  const int64_t kp = round_up(w.k, kVnniK), tiles = round_up(w.m, kVnniRows) / kVnniRows;
  const int64_t groups = kp / 4;
  thread_local std::vector<uint8_t> bexp;
  thread_local std::vector<int32_t> sums, c;
  bexp.assign(static_cast<size_t>((groups + 1) / 2 * 64), 0);
  sums.resize(static_cast<size_t>(tiles * kVnniRows));
  c.resize(static_cast<size_t>(tiles * kVnniRows * n));
  const auto* src = static_cast<const uint8_t*>(b);
  const uint8_t flip = b_signed ? 0x80 : 0;
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t g = 0; g < groups; ++g) {  // group g: 4 bytes, repeated over 8 lanes of its half
      uint8_t four[4] = {0, 0, 0, 0};  // k past K: 0 (W's padding is 0 there)
      for (int64_t t = 0; t < 4 && 4 * g + t < w.k; ++t) four[t] = static_cast<uint8_t>(src[(4 * g + t) * ld_k + j * ld_n] ^ flip);
      uint8_t* at = bexp.data() + (g / 2) * 64 + (g % 2) * 32;
      for (int r = 0; r < 8; ++r) std::memcpy(at + 4 * r, four, 4);
    }
    gemv_vnni(w, bexp.data(), 0, tiles, sums.data());
    for (int64_t m = 0; m < tiles * kVnniRows; ++m) c[static_cast<size_t>(m * n + j)] = sums[static_cast<size_t>(m)];
  }
  for (int64_t m0 = 0; m0 < w.m; m0 += kVnniRows) {
    finish_tile(c.data() + m0 * n, std::min(kVnniRows, w.m - m0), n, n, w, m0, 0, b_signed ? b_zp + 128 : b_zp,
                corrected, sink);
  }
}

}  // namespace

Int8Path default_int8_path() {
  static const Int8Path path = [] {
    if (env_set("DNNX_INT8_PORTABLE")) return Int8Path::Portable;
    const bool avx2 = __builtin_cpu_supports("avx2");
    const bool vnni = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vnni");
    const bool avx_vnni = avx2 && __builtin_cpu_supports("avxvnni");
    if (env_set("DNNX_INT8_AVX2")) return avx2 ? Int8Path::Avx2 : Int8Path::Portable;
    if (env_set("DNNX_INT8_AVXVNNI") && avx_vnni) return Int8Path::AvxVnni;
    if (vnni && !env_set("DNNX_INT8_VNNI") && amx_int8_usable()) return Int8Path::Amx;  // Note [int8 amx]
    if (vnni) return Int8Path::Vnni;
    if (avx_vnni) return Int8Path::AvxVnni;
    return avx2 ? Int8Path::Avx2 : Int8Path::Portable;
  }();
  return path;
}

const char* int8_path_name(Int8Path path) {
  switch (path) {
    case Int8Path::Amx: return "amx";
    case Int8Path::Vnni: return "avx512-vnni";
    case Int8Path::AvxVnni: return "avx-vnni";
    case Int8Path::Avx2: return "avx2";
    default: return "portable";
  }
}

Int8Weights pack_int8_weights(const void* w, bool is_signed, int64_t m, int64_t k, int64_t ld_m, int64_t ld_k,
                              const void* zp, bool zp_per_row, Int8Path path) {
  Int8Weights out;
  out.m = m;
  out.k = k;
  auto zero_point = [&](int64_t r) { return zp ? weight_at(zp, is_signed, zp_per_row ? r : 0) : 0; };
  bool all_zero = is_signed;
  for (int64_t r = 0; r < m && all_zero; ++r) all_zero = zero_point(r) == 0;
  if (path == Int8Path::Amx && !amx_int8_usable()) path = Int8Path::Vnni;  // asked for where it is not (the test hook)
  if (path == Int8Path::Vnni && !(__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw"))) {
    path = Int8Path::Avx2;  // asked for on a CPU without it (the test hook)
  }
  if (path == Int8Path::AvxVnni && !__builtin_cpu_supports("avxvnni")) path = Int8Path::Avx2;
  if ((path == Int8Path::Vnni || path == Int8Path::AvxVnni || path == Int8Path::Amx) && !all_zero) path = Int8Path::Avx2;
  if (path == Int8Path::Avx2 && !__builtin_cpu_supports("avx2")) path = Int8Path::Portable;
  out.path = path;
  out.row_sums.assign(static_cast<size_t>(m), 0);
  auto value = [&](int64_t r, int64_t p) { return weight_at(w, is_signed, r * ld_m + p * ld_k) - zero_point(r); };
  for (int64_t r = 0; r < m; ++r) {
    int32_t sum = 0;
    for (int64_t p = 0; p < k; ++p) sum += value(r, p);
    out.row_sums[static_cast<size_t>(r)] = sum;
  }
  if (path == Int8Path::Portable) {
    out.s16.resize(static_cast<size_t>(m * k));
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t p = 0; p < k; ++p) out.s16[static_cast<size_t>(r * k + p)] = static_cast<int16_t>(value(r, p));
    }
    return out;
  }
  const PathShape ps = shape_of(path);
  const bool vnni = ps.bytes;
  // The layout's groups: [M/rows][K/kg][rows][kg]; AMX's W tiles are [M/16][K/64][16][64].
  const int64_t rows = path == Int8Path::Amx ? 16 : ps.rows, kg = path == Int8Path::Amx ? kAmxTileK : ps.kg;
  const int64_t mp = round_up(m, ps.rows), kp = padded_k(path, k);
  // element (r, p) of tile t at ((t * kp/kg + p/kg) * rows + r) * kg + p%kg
  auto index = [&](int64_t r, int64_t p) { return (((r / rows) * (kp / kg) + p / kg) * rows + r % rows) * kg + p % kg; };
  if (vnni) out.s8.assign(static_cast<size_t>(mp * kp), 0);
  else out.s16.assign(static_cast<size_t>(mp * kp), 0);
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t p = 0; p < k; ++p) {
      if (vnni) out.s8[static_cast<size_t>(index(r, p))] = static_cast<int8_t>(value(r, p));
      else out.s16[static_cast<size_t>(index(r, p))] = static_cast<int16_t>(value(r, p));
    }
  }
  return out;
}

size_t int8_gemm_scratch_bytes(const Int8Weights& w, int64_t n) {
  if (w.path == Int8Path::Portable) return static_cast<size_t>(w.k * n) * sizeof(int16_t) + static_cast<size_t>(w.m * n) * sizeof(int32_t);
  const int64_t width = shape_of(w.path).cols;
  return static_cast<size_t>(round_up(n, width) * padded_k(w.path, w.k));
}

void int8_gemm_tiles(const Int8Weights& w, const void* b, bool b_signed, int32_t b_zp, int64_t n, int64_t ld_k,
                     int64_t ld_n, const Int8TileSink& sink, void* scratch, int workers, bool corrected) {
  if (w.path == Int8Path::Portable) {  // Note [int8 gemm]'s int16 loop, C whole, then one sink call
    auto* b16 = static_cast<int16_t*>(scratch);
    auto* c = reinterpret_cast<int32_t*>(b16 + w.k * n);
    for (int64_t p = 0; p < w.k; ++p) {
      for (int64_t j = 0; j < n; ++j) {
        const int32_t v = b_signed ? static_cast<const int8_t*>(b)[p * ld_k + j * ld_n]
                                   : static_cast<const uint8_t*>(b)[p * ld_k + j * ld_n];
        b16[p * n + j] = static_cast<int16_t>(v - b_zp);
      }
    }
    gemm_s16(w.m, n, w.k, w.s16.data(), b16, c, workers);
    sink(0, w.m, 0, n, c, n);
    return;
  }
  if (w.path == Int8Path::Vnni && n <= kGemvColumns) {  // Note [int8 gemv]
    if (n > 0) gemv_columns(w, b, b_signed, b_zp, n, ld_k, ld_n, sink, corrected);
    return;
  }
  const int64_t panels = panel_count(w.path, n);
  auto* bytes = static_cast<uint8_t*>(scratch);
  if (row_split_pays(w, panels, workers)) {  // Note [int8 row split]
    gemm_row_split(w, b, nullptr, b_signed, b_zp, n, ld_k, ld_n, sink, corrected, panels, workers);
    return;
  }
  if (workers <= 1 || panels < 2) {
    gemm_panels(w, b, nullptr, b_signed, b_zp, n, ld_k, ld_n, sink, corrected, bytes, 0, panels);
    return;
  }
  cpu_thread_pool().parallel_for(
      panels, [&](int64_t first, int64_t last, int) {
        gemm_panels(w, b, nullptr, b_signed, b_zp, n, ld_k, ld_n, sink, corrected, bytes, first, last);
      },
      workers);
}

void int8_gemm_tiles_from(const Int8Weights& w, const Int8ColumnSource& source, bool b_signed, int32_t b_zp, int64_t n,
                          const Int8TileSink& sink, void* scratch, int workers, bool corrected) {
  if (w.path == Int8Path::Portable) {  // B whole, then the plain loop (the test path: speed is no matter)
    std::vector<uint8_t> whole(static_cast<size_t>(w.k * n));
    if (n > 0) source(0, n, whole.data(), n);
    int8_gemm_tiles(w, whole.data(), b_signed, b_zp, n, n, 1, sink, scratch, workers, corrected);
    return;
  }
  const int64_t panels = panel_count(w.path, n);
  auto* bytes = static_cast<uint8_t*>(scratch);
  if (row_split_pays(w, panels, workers)) {  // Note [int8 row split]
    gemm_row_split(w, nullptr, &source, b_signed, b_zp, n, 0, 1, sink, corrected, panels, workers);
    return;
  }
  if (workers <= 1 || panels < 2) {
    gemm_panels(w, nullptr, &source, b_signed, b_zp, n, 0, 1, sink, corrected, bytes, 0, panels);
    return;
  }
  cpu_thread_pool().parallel_for(
      panels, [&](int64_t first, int64_t last, int) {
        gemm_panels(w, nullptr, &source, b_signed, b_zp, n, 0, 1, sink, corrected, bytes, first, last);
      },
      workers);
}

int32_t int8_gemm_row_correction(const Int8Weights& w, bool b_signed, int32_t b_zp, int64_t m) {
  if (w.path == Int8Path::Portable) return 0;  // its sums subtract the zero point first
  const auto zp = static_cast<uint32_t>(b_signed ? b_zp + 128 : b_zp);
  return static_cast<int32_t>(0u - zp * static_cast<uint32_t>(w.row_sums[static_cast<size_t>(m)]));
}

void int8_gemm(const Int8Weights& w, const void* b, bool b_signed, int32_t b_zp, int64_t n, int64_t ld_k,
               int64_t ld_n, int32_t* c, void* scratch, int workers) {
  int8_gemm_tiles(w, b, b_signed, b_zp, n, ld_k, ld_n,
                  [&](int64_t m0, int64_t rows, int64_t j0, int64_t cols, const int32_t* tile, int64_t ld) {
                    for (int64_t r = 0; r < rows; ++r) std::memcpy(c + (m0 + r) * n + j0, tile + r * ld, sizeof(int32_t) * cols);
                  },
                  scratch, workers);
}

}  // namespace dnnx
