// Stride-2 int8 convs as shifted planes (the fused QDQ layers' conv: qdq_int8_cpu.cc).
//
// Note [int8 phase planes]: a 2-D conv of stride 2 (dilation 1) reads X's rows and columns of
// one parity per tap. With kh - pad_top = 2 a + r (r in {0, 1}), output row oh's tap kh reads X
// row 2 (oh + a) + r: row oh + a of the "phase plane" r, P_r[i] = X[2 i + r]; the same for the
// columns. So X's channel planes are split once per run into the phases the taps use, each
// out_h x out_w (P[r][c][i][j] = X[2 i + r, 2 j + c], x_zero_point past X), and every im2col row
// is then one phase plane shifted by (a, b) with what falls outside it set to x_zero_point: the
// same masked 64-byte loads as a stride-1 conv (Note [tiled int8 im2col]), where the stride-2
// im2col gathered a dword per byte (ResNet-50's three stride-2 3x3 convs: 0.98, 0.81 and 0.90 ms
// against onnxruntime's ~0.55). A 1x1, unpadded, stride-2 conv (ResNet's projections) uses one
// phase, P[0][0]: X subsampled, which the GEMM then reads as a 1x1 conv's columns, with no im2col.
// The split: one 64-byte load per 64 bytes of an X row and one vpermb (AVX-512 VBMI) putting the
// even bytes in the low half and the odd ones in the high half.
// This holds where no tap reads inside X but outside its phase plane (an X row 2 i + r with
// i >= out_h): phase_planes_fit checks every tap at plan time (true of the usual pads:
// ResNet's 3x3 pad 1 and its 7x7 pad 3 stem on even sizes).
#pragma once
#include <cstdint>
#include <vector>

#include "ops/conv/conv_geometry.h"

namespace dnnx {

// One im2col row source: a tap's phase plane (slot among the ones made) and its shift.
struct PhaseTap {
  int64_t slot, dy, dx;
};

struct PhasePlanes {
  int64_t slots = 0;             // phase planes per channel (the ones some tap reads)
  int64_t slot_of[4] = {-1, -1, -1, -1};  // phase r * 2 + c -> its slot, or -1 (unused)
  std::vector<PhaseTap> taps;    // per tap kh * kw_n + kw
};

// Whether this conv (geometry expanded to 3 dims, depth 1) runs on phase planes here: 2-D,
// stride 2 both ways, dilation 1, every tap inside its phase plane wherever it reads inside X,
// and a CPU with AVX-512 BW and VBMI. Fills `out` where it does.
bool phase_planes_fit(const ConvGeometry& g, PhasePlanes& out);

// X's `channels` planes (in_h x in_w bytes each, from x) -> dst [channels][slots][out_h * out_w].
void make_phase_planes(const PhasePlanes& p, const ConvGeometry& g, const uint8_t* x, int64_t channels, uint8_t zp,
                       uint8_t* dst);

// Note [shifted plane masks]: which of the positions [j0, j0 + len) of an h x w output read
// inside a plane of the same size shifted by (dy, dx): bits set in m (zeroed here, len bits, 64
// a word), a run of bits per output row. Per position (four compares and a bit each) this took
// 0.8 ms of the 7x7 stem's im2col (49 taps x 12544 positions); per row it is ~100 runs a chunk.
void shifted_plane_masks(int64_t h, int64_t w, int64_t dy, int64_t dx, int64_t j0, int64_t len, uint64_t* m);

// The im2col columns [j0, j1) of rows (c, tap) from the phase planes, row r at dst + r * ld.
void phase_im2col(const PhasePlanes& p, const ConvGeometry& g, const uint8_t* planes, int64_t channels, uint8_t zp,
                  int64_t j0, int64_t j1, uint8_t* dst, int64_t ld);

}  // namespace dnnx
