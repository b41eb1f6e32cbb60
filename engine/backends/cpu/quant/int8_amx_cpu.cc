// Note [int8 amx]: Intel's AMX (Sapphire Rapids on) multiplies tiles in a unit of its own: one
// tdpbsud adds the products of a [16 x 64] int8 tile and a [64 x 16] uint8 tile (held as 16 rows
// of 16 columns x 4 k, the vnni panel's own row layout) into a [16 x 16] int32 tile: 16,384
// multiply-adds per instruction, about 8x what vpdpbusd on zmm gives per cycle. The path keeps
// the vnni path's everything else: B's panels (32 columns, [K/4][32][4]: a tile of 16 columns is
// 64 bytes of each 128-byte row, loaded with a 128-byte stride), the zero-point correction and
// the tile sink (the fused layers' epilogues). W is packed [M/16][K/64][16][64] (rows and k past
// M and K zero), so a row tile of 32 is two tiles of W per 64 k, and 2 x 2 C tiles accumulate
// across K. The sums are exact int32 (wrapping mod 2^32 as the other paths).
//
// Linux gives a process the tile data (8 KB of state per thread) only on request
// (arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)); a CPU or kernel that refuses leaves the
// vnni path in place. Each GEMM call loads the tile configuration on its thread and releases it
// after (a released thread's context switches save no tile state).
#include "backends/cpu/quant/int8_amx_cpu.h"

#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

namespace dnnx {

namespace {

constexpr long kArchReqXcompPerm = 0x1023;  // ARCH_REQ_XCOMP_PERM (asm/prctl.h)
constexpr long kXfeatureXtiledata = 18;     // XFEATURE_XTILEDATA

// The 64-byte tile configuration (palette 1): every tile 16 rows of 64 bytes.
struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

TileConfig full_tiles() {
  TileConfig c;
  for (int t = 0; t < 8; ++t) {
    c.colsb[t] = 64;
    c.rows[t] = 16;
  }
  return c;
}

}  // namespace

bool amx_int8_usable() {
  static const bool usable = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
    const bool tile = (edx >> 24) & 1, int8 = (edx >> 25) & 1;  // AMX-TILE, AMX-INT8
    if (!tile || !int8) return false;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return usable;
}

__attribute__((target("amx-tile"))) void amx_begin() {
  static const TileConfig config = full_tiles();
  _tile_loadconfig(&config);
}

__attribute__((target("amx-tile"))) void amx_end() { _tile_release(); }

// Tiles: 0-3 the C tiles (rows 0-15 / 16-31 x columns 0-15 / 16-31), 4-5 W, 6-7 B.
__attribute__((target("amx-tile,amx-int8"))) void amx_tile_32x32(const int8_t* w0, const int8_t* w1,
                                                                   const uint8_t* bp, int64_t kb, int32_t* c) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (int64_t b = 0; b < kb; ++b) {
    _tile_loadd(4, w0 + b * 1024, 64);
    _tile_loadd(5, w1 + b * 1024, 64);
    _tile_loadd(6, bp + b * 16 * 128, 128);       // columns 0-15 of 16 k groups
    _tile_loadd(7, bp + b * 16 * 128 + 64, 128);  // columns 16-31
    _tile_dpbsud(0, 4, 6);
    _tile_dpbsud(1, 4, 7);
    _tile_dpbsud(2, 5, 6);
    _tile_dpbsud(3, 5, 7);
  }
  _tile_stored(0, c, 128);
  _tile_stored(1, c + 16, 128);
  _tile_stored(2, c + 16 * 32, 128);
  _tile_stored(3, c + 16 * 32 + 16, 128);
}

}  // namespace dnnx
