// The AVX-512 VNNI micro kernels of the int8 GEMM (Note [int8 gemm paths] in int8_gemm_cpu.h):
// 8 rows of W times one packed B panel of `width` columns, exact int32 sums.
//
// Note [vnni column tails]: a panel is 32 columns (2 zmm a row: 16 sums), but the last one of a
// GEMM is only as wide as it must be: 8 columns (a ymm a row) or 16 (a zmm) where its tail
// fits, else 32. A 14x14 conv's 196 columns were 7 panels of 32 (224: 12.5% of the products
// thrown away), now 6 of 32 and one of 8 (200). One register a row is 8 chains of vpdpbusd only,
// which wait on its latency (AMD Zen 4: a ymm form of 8 chains ran at ~60% of peak), so the
// narrow kernels sum even and odd k groups apart (16 chains) and add the two at the end: ~99%
// of peak at 16 columns, ~85% at 8, measured alone. A 24-column form (a zmm and a ymm a row) ran
// at 68%: slower than 32 with 8 thrown away, so a tail of 17 to 31 takes 32 (a 7x7 conv: 64
// for 49). B's panel is [K/4][width][4] bytes, as for 32.
#pragma once
#include <cstdint>

namespace dnnx {

constexpr int64_t kVnniRows = 8, kVnniCols = 32, kVnniK = 4;

// W's row tile [K/4][8][4] int8, B's panel [K/4][width][4] uint8 (k4 = K/4 groups); the sums to
// out[r * width + j], width 8, 16 or 32.
void vnni_tile(int64_t width, const int8_t* wp, const uint8_t* bp, int64_t k4, int32_t* out);

// The width of a panel starting at column j0 of n: 8 or 16 for a tail that fits, else 32.
inline int64_t vnni_panel_width(int64_t n, int64_t j0) {
  const int64_t left = n - j0;
  return left <= 8 ? 8 : left <= 16 ? 16 : kVnniCols;
}

}  // namespace dnnx
