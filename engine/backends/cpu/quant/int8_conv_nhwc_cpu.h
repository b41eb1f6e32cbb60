// "Int8Conv@NHWC" on the CPU: the fused QDQ conv (qdq_int8_cpu.cc has its arithmetic) with X, the
// residual Z and Y channels-last, the channels_last pass's form (Note [channels last]).
//
// Note [int8 nhwc conv]: the NCHW kernel runs W [M, K] x B [K, pixels], B packed per run from
// X's planes (an im2col for a 3x3 conv, then VNNI's 4-byte interleave) and Y written per output
// channel row. With X channels-last, a pixel's C channels are C consecutive bytes, so a tile
// reads them in place: for R pixels and a block of up to 64 filters, each step broadcasts 4
// channels of each pixel (one int32) against the block's packed weights [64 filters][4 channels],
// vpdpbusd summing uint8 x int8 products into int32 (exact, as Note [int8 gemm paths]). A tap of
// a KxK window is the same loop over another pixel's row, through per-tile pointers (a padded tap
// points at a row holding X's zero point: its products are taken off with the rest below), so
// nothing is packed or copied per run. The epilogue works along a pixel's channels, each lane its
// own channel's factors (int8_epilogue_lanes.h, the row forms' operations in the same order: the
// same bits), and writes the pixel's M outputs in a row. Measured alone on the sweep machine's
// Zen 4 core, one thread: the 1x1 conv 256 -> 64 at 56x56 with its epilogue in 0.247 ms (the NCHW
// kernel: 0.31 ms; onnxruntime's QLinearConv: 0.257).
//   sums[p, m] = sum over taps and c of x_or_zp[p, tap, c] * w[m, tap, c] - x_zp * sum(w[m, ...])
// (the second term joins the channel's int32 bias; an int8 X is read as x + 128, 4 bytes flipped
// by one scalar XOR before the broadcast, and its zero point with it). Needs 8-bit X with C a
// multiple of 4, W int8 with zero points 0, one group, 2-D, and AVX-512 VNNI: the pass keeps any other conv in ONNX's
// layout (int8_conv_fits in the pass, CpuBackend's refusal). Every output is computed whole by one
// thread, so the thread count changes no bit.
#pragma once
#include <cstdint>
#include <vector>

#include "backends/cpu/quant/int8_epilogue_cpu.h"

namespace dnnx {

// The geometry and packed weights of one Int8Conv@NHWC (made at plan time).
struct Int8NhwcConv {
  int64_t batch = 0, in_h = 0, in_w = 0, channels = 0;  // X [N, H, W, C]
  int64_t out_h = 0, out_w = 0, filters = 0;            // Y [N, OH, OW, M]
  int64_t kh = 1, kw = 1, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, pad_top = 0, pad_left = 0;
  // per block of up to 64 filters (16 a lane group, the last block's past M zero):
  // [kh * kw][C / 4][16 * groups][4] int8
  std::vector<int8_t> packed;
  std::vector<int32_t> row_sums;  // [M]: filter m's weights summed
  bool x_signed = false;          // int8 X: each byte read as x + 128 (uint8), its zero point with it

  int64_t taps() const { return kh * kw; }
  int64_t pixels() const { return batch * out_h * out_w; }
};

// w: the permuted filter [M, kh, kw, C] int8 (the pass's). The geometry fields must be set.
void pack_int8_nhwc_weights(const int8_t* w, Int8NhwcConv& conv);

// What the epilogue needs for one run (the NCHW kernel's run parameters, qdq_int8_cpu.cc).
struct Int8NhwcOutput {
  const int8_epilogue::RowParams* channels = nullptr;  // [M], each ibias with X's zero point's term
  bool float_out = false, relu = false;
  int8_epilogue::QuantRange y, r;  // Y's range (the Relu's floor in it), and r's with a residual
  const void* z = nullptr;         // the residual [N, OH, OW, M] (8-bit), or null
  bool z_signed = false;
  int8_epilogue::ResidualParams residual{};
};

// The int32 term of X's zero point for filter m, to add (mod 2^32) to its bias.
int32_t int8_nhwc_zero_point_term(const Int8NhwcConv& conv, int32_t x_zp, int64_t m);

// X [N, H, W, C] 8-bit (x_zp: its zero point's byte) -> Y [N, OH, OW, M] (8-bit, or float32 with
// float_out), on up to `workers` threads.
void run_int8_nhwc_conv(const Int8NhwcConv& conv, const uint8_t* x, uint8_t x_zp, const Int8NhwcOutput& out, void* y,
                        int workers);

// Whether this CPU runs the channels-last int8 conv (AVX-512 VNNI, and the int8 path chosen is
// AVX-512 VNNI or AMX: DNNX_INT8_AVX2=1 and the like keep the NCHW kernel, so their tests hold).
bool int8_nhwc_conv_available();

}  // namespace dnnx
