// The CPU's int8 GEMM for the fused QDQ layers (Int8Conv, Int8Gemm, Int8MatMul:
// ops/quant/qdq_int8.cc): C[M, N] int32 = (W[M, K] - w_zero_point[m]) x (B[K, N] - b_zero_point),
// W the layer's constant weights (output channels as rows), packed once at plan time, B the
// activations (im2col columns, or a MatMul's A read transposed), packed per run.
//
// Note [int8 gemm paths]: two vector paths, both exact int32 accumulation (the same sums as
// Note [int8 gemm]'s int16 loop, wrapping mod 2^32 past int32 as that one and MLAS do):
//   vnni   AVX-512 VNNI vpdpbusd: B as uint8 (an int8 activation is shifted by 128 into uint8,
//          its zero point with it), W as int8, four products summed straight into int32 (no
//          int16 intermediate, so none of vpmaddubsw's saturation). Needs W's zero points 0
//          (onnxruntime's quantize_static writes symmetric int8 weights).
//   avx-vnni the same on ymm registers (VEX-encoded vpdpbusd) where the CPU has AVX-VNNI but not
//          AVX-512.
//   avx2   vpmaddwd: B uint8 widened to int16, W minus its zero point as int16 (any zero point,
//          int8 or uint8 weights), two products summed into int32, exact (|B| <= 255,
//          |W - zp| <= 255). onnxruntime's AVX2 kernel uses vpmaddubsw on uint8 x int8 and
//          accepts its int16 saturation; this path does not saturate.
//   amx    Intel AMX (Note [int8 amx], int8_amx_cpu.cc): tdpbsud, int8 W tiles [16 rows x 64 k]
//          times uint8 B tiles [16 k groups x 16 columns x 4], exact int32 sums in 16 x 16 tiles;
//          the B panels are the vnni path's, W's zero points 0 as there. Chosen first where the
//          CPU and the OS allow it; DNNX_INT8_VNNI=1 takes the vnni path instead.
// Both sum W x B_uint8 and subtract b_zero_point x rowsum(W - w_zp) per row once at the end
// (a padded conv tap holds b_zero_point and so adds nothing). A CPU without AVX2, or
// DNNX_INT8_AVX2=1 on one with VNNI, uses the path below it (`portable`: the int16 loop of
// int_gemm_cpu.h); tests force each path (Int8Path argument).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace dnnx {

enum class Int8Path { Portable, Avx2, AvxVnni, Vnni, Amx };

// The best path this CPU has (AMX, AVX-512 VNNI, AVX-VNNI, AVX2, portable), unless
// DNNX_INT8_VNNI=1 (AVX-512 VNNI even where AMX is), DNNX_INT8_AVX2=1 (AVX2 even where a VNNI
// is), DNNX_INT8_AVXVNNI=1 (AVX-VNNI where the CPU has it, even with AVX-512) or
// DNNX_INT8_PORTABLE=1 (the plain loop) says otherwise; read once.
Int8Path default_int8_path();
const char* int8_path_name(Int8Path path);  // "amx", "avx512-vnni", "avx-vnni", "avx2", "portable"
// Whether the kernels around the GEMM (epilogues, depthwise, quantize) take their AVX-512 forms.
inline bool int8_avx512(Int8Path path) { return path == Int8Path::Vnni || path == Int8Path::Amx; }

// W packed for one path: rows padded to the path's row tile, K to its k group.
struct Int8Weights {
  Int8Path path = Int8Path::Portable;
  int64_t m = 0, k = 0;
  std::vector<int8_t> s8;       // vnni: [M/8][K/4][8][4]; avx-vnni: [M/6][K/4][6][4]; amx: [M/16][K/64][16][64]
  std::vector<int16_t> s16;     // avx2: [M/6][K/2][6][2]; portable: [M][K], W - zp
  std::vector<int32_t> row_sums;  // sum over k of W[m, k] - zp[m]
};

// W[m, k] at w[m * ld_m + k * ld_k] (int8 or uint8 as `is_signed` says), its zero point zp[m]
// (zp_per_row) or zp[0], or none (nullptr). A path that cannot take the weights (vnni with a
// nonzero zero point or uint8 weights) falls back to avx2.
Int8Weights pack_int8_weights(const void* w, bool is_signed, int64_t m, int64_t k, int64_t ld_m, int64_t ld_k,
                              const void* zp, bool zp_per_row, Int8Path path);

// Receives C's finished tiles (from several threads at once where workers > 1): rows
// [m0, m0 + rows) x columns [j0, j0 + cols), element (r, j) at c[r * ld + j], exact sums.
using Int8TileSink = std::function<void(int64_t m0, int64_t rows, int64_t j0, int64_t cols, const int32_t* c, int64_t ld)>;

// B[k, j] at b[k * ld_k + j * ld_n] (uint8, or int8 when b_signed: shifted by 128 here), its
// zero point b_zp (of B's type); C [M, N] row-major (ldc = N), overwritten; up to `workers`
// threads. `scratch` must hold int8_gemm_scratch_bytes(w, n, k) bytes.
void int8_gemm(const Int8Weights& w, const void* b, bool b_signed, int32_t b_zp, int64_t n, int64_t ld_k,
               int64_t ld_n, int32_t* c, void* scratch, int workers);
size_t int8_gemm_scratch_bytes(const Int8Weights& w, int64_t n);
// The same product handed to `sink` tile by tile while it is in cache (the fused layers
// requantize each tile there: C is never written whole).
// corrected = false: the tiles lack the zero point's term, row m's sums short of the exact ones by
// -int8_gemm_row_correction(w, b_signed, b_zp, m) (mod 2^32), which the caller adds (in its bias).
void int8_gemm_tiles(const Int8Weights& w, const void* b, bool b_signed, int32_t b_zp, int64_t n, int64_t ld_k,
                     int64_t ld_n, const Int8TileSink& sink, void* scratch, int workers, bool corrected = true);
// B made a few panels at a time (Note [int8 panel order]): fill(j0, j1, dst, ld) writes B's
// columns [j0, j1), k by k, row k at dst + k * ld (B's own bytes: int8 or uint8 as b_signed
// says); a conv's im2col of those output positions only, so the columns stay in L2 (tiled im2col).
using Int8ColumnSource = std::function<void(int64_t j0, int64_t j1, uint8_t* dst, int64_t ld)>;
// int8_gemm_tiles with B from `source` (called from the workers, on column ranges of their own).
void int8_gemm_tiles_from(const Int8Weights& w, const Int8ColumnSource& source, bool b_signed, int32_t b_zp, int64_t n,
                          const Int8TileSink& sink, void* scratch, int workers, bool corrected = true);
int32_t int8_gemm_row_correction(const Int8Weights& w, bool b_signed, int32_t b_zp, int64_t m);

}  // namespace dnnx
