// The AMX micro kernel of the int8 GEMM (Note [int8 amx] in int8_amx_cpu.cc; the path's place
// among the others: Note [int8 gemm paths] in int8_gemm_cpu.h).
#pragma once
#include <cstdint>

namespace dnnx {

// Whether this CPU has AMX-TILE and AMX-INT8 and the OS lets this process use the tile data
// (asked once, with arch_prctl); false where either says no.
bool amx_int8_usable();

// The tile configuration (all eight tiles 16 rows x 64 bytes) loaded on this thread, and
// released; a thread runs amx_tile_32x32 only between the two.
void amx_begin();
void amx_end();

// C [32 x 32] int32 (row r at c + r * 32) = W [32 rows x 64 * kb] x B [64 * kb x 32]: W's rows
// 0-15 at w0 and 16-31 at w1, each [kb][16 rows][64 k] int8; B a vnni panel [16 * kb][32
// columns][4 k] uint8 (the rows past K zero weights' partners: any bytes).
void amx_tile_32x32(const int8_t* w0, const int8_t* w1, const uint8_t* bp, int64_t kb, int32_t* c);

}  // namespace dnnx
