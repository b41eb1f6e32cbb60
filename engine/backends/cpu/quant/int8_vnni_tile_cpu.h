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
// at 68%: slower than 32 with 8 thrown away, so a tail of 25 to 31 takes 32, and one of 17 to 24
// two panels, 16 and 8 (Note [vnni split tails]). B's panel is [K/4][width][4] bytes, as for 32.
//
// Note [vnni split tails]: layer4 of ResNet-50 has 7x7 = 49 columns: 32 + 32 computed 64 (77%
// used). As 32 + 16 + 8 it computes 56: by the rates above 32/0.97 + 16/0.99 + 8/0.85 = 58.6
// column-times against 64/0.97 = 66 (-11% on those layers). The panels then differ in width
// within one GEMM: panel p's first column and width come from vnni_panel; its packed bytes
// start at j0 * K (the widths before it sum to j0), inside the scratch of round_up(n, 32)
// columns.
#pragma once
#include <cstdint>

namespace dnnx {

constexpr int64_t kVnniRows = 8, kVnniCols = 32, kVnniK = 4;

// W's row tile [K/4][8][4] int8, B's panel [K/4][width][4] uint8 (k4 = K/4 groups); the sums to
// out[r * width + j], width 8, 16 or 32.
void vnni_tile(int64_t width, const int8_t* wp, const uint8_t* bp, int64_t k4, int32_t* out);

// Panel p of a GEMM of n columns: its first column and width (Notes [vnni column tails] and
// [vnni split tails]): n / 32 panels of 32, then a tail t = n % 32 as one panel of 8 (t <= 8), 16
// (t <= 16) or 32 (t > 24), or two of 16 and 8 (16 < t <= 24).
struct VnniPanel {
  int64_t j0, width;
};
inline int64_t vnni_panel_count(int64_t n) {
  const int64_t t = n % kVnniCols;
  return n / kVnniCols + (t == 0 ? 0 : t > 16 && t <= 24 ? 2 : 1);
}
inline VnniPanel vnni_panel(int64_t n, int64_t p) {
  const int64_t full = n / kVnniCols, t = n % kVnniCols, j0 = p * kVnniCols;
  if (p < full) return {j0, kVnniCols};
  if (t <= 8) return {j0, 8};
  if (t <= 16) return {j0, 16};
  if (t > 24) return {j0, kVnniCols};
  return p == full ? VnniPanel{j0, 16} : VnniPanel{full * kVnniCols + 16, 8};
}

}  // namespace dnnx
