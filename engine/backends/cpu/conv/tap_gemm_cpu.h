// A small product computed in registers (tap_gemm_cpu.cc, Note [tap gemm]): the direct conv's
// kernel (conv_direct_cpu.cc) and the LSTM's (lstm_cpu.cc). For every tile and vector v of it,
// and i in [0, lanes):
//   C[m, out_v + i] = epilogue( sum over k of A[m, k] * B[in_v + taps[k] + i] )
// A is row-major [M, K] (K = the taps), C has rows of stride ldc. For a conv, B is the image and
// taps[k] the input offset of tap k = (c, kd, kh, kw); for a GEMM, B is [K, N] and taps[k] = k*N.
#pragma once
#include <cstdint>
#include <vector>

#include "backends/cpu/conv/conv_epilogue_cpu.h"

namespace dnnx {

// Up to three 8-wide vectors of C's columns, only the last of them short (lanes < 8); or up to
// four 16-wide ones, any of them short (Note [tap gemm in avx512]).
struct TapTile {
  int32_t in[4];     // B offset of each vector's first column
  int32_t out[4];    // C column of each vector
  int32_t lanes[4];  // each vector's columns: 1-8 (8-wide) or 1-16
  int32_t vectors;   // 1-4
};

// Builds tiles from runs of columns: a run's vectors fill tiles in order; 8 wide, a short end
// closes one (the AVX2 tile masks only its last vector).
class TapTileBuilder {
 public:
  explicit TapTileBuilder(int max_vectors, int lanes = 8) : max_vectors_(max_vectors), lanes_(lanes) {}
  // `width` columns starting at B offset `in` and C column `out`.
  void add_run(int64_t in, int64_t out, int64_t width);
  std::vector<TapTile> finish();

 private:
  int max_vectors_;
  int lanes_;
  TapTile open_{};
  std::vector<TapTile> tiles_;
};

// Whether the 8-wide (AVX2 and FMA) kernels run on this CPU; without them a plain loop does
// the same sums in the same order.
bool tap_gemm_vectorized();
// Whether the 16-wide (AVX-512) tiles run on this CPU (Note [tap gemm in avx512]).
bool tap_gemm_avx512();

class TapGemm {
 public:
  // C's rows are computed in panels of panel_rows(rows) (4-6) rows: M * NV sums in registers.
  static int64_t panel_rows(int64_t rows);
  // The vectors a tile of `lanes` (8 or 16) lanes may hold for that panel height.
  static int max_vectors(int64_t rows, int lanes = 8);

  // tiles: built with `lanes` (8, or 16 where tap_gemm_avx512()).
  TapGemm(int64_t rows, std::vector<int32_t> taps, std::vector<TapTile> tiles, int lanes = 8);

  int64_t rows() const { return rows_; }
  int64_t panels() const { return panels_; }

  // C rows of panels [panel_begin, panel_end): e.bias [M] (per row), e.residual [M, ldz] (ldz 0:
  // one row added to every row, a bias per column; or C itself with ldz = ldc: C += A*B),
  // e.relu. Each output's sum runs over k in order in one lane, whatever the tile or the panels
  // asked for: results do not depend on how the panels are split.
  void run(const float* a, const float* b, const ConvEpilogue& e, float* c, int64_t ldc, int64_t ldz,
           int64_t panel_begin, int64_t panel_end) const;
  void run(const float* a, const float* b, const ConvEpilogue& e, float* c, int64_t ldc) const {
    run(a, b, e, c, ldc, ldc, 0, panels_);
  }

 private:
  int64_t rows_;
  int64_t panel_rows_;
  int64_t panels_;
  int lanes_;
  std::vector<int32_t> taps_;
  std::vector<TapTile> tiles_;
};

// C [M, N] (ldc) = A [M, K] * B [K, N] (dense rows) as a TapGemm: the plan of one shape.
TapGemm dense_tap_gemm(int64_t m, int64_t n, int64_t k);

// Note [tap panels]: B [K, N] in panels of `width` columns, each panel K rows of `width` floats
// one after the other (the last panel's columns past N are never read), so that a tile reads its
// B vectors for every k from one forward stream. tap_panel_floats: the packed size.
int64_t tap_panel_floats(int64_t n, int64_t k, int64_t width);
void pack_tap_panels(const float* b, int64_t n, int64_t k, int64_t width, float* packed);
// C [M, N] (ldc) = A [M, K] * B, B packed by pack_tap_panels with width 8 * vectors (vectors at
// most max_vectors(m)): each output's sum is dense_tap_gemm's, over k in order, so the same bits.
TapGemm panel_tap_gemm(int64_t m, int64_t n, int64_t k, int vectors);

}  // namespace dnnx
