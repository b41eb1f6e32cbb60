// The fused QDQ layers' requantizing epilogue (Int8Conv, Int8Gemm, Int8MatMul:
// qdq_int8_cpu.cc, whose file comment gives the arithmetic): one output channel's exact int32
// sums -> its 8-bit outputs, in float32 as onnxruntime requantizes (Note [requantization] in
// quant_codec.h), with AVX2 and AVX-512 forms chosen once per process. No FMA anywhere:
// onnxruntime rounds the product and the sum apart.
#pragma once
#include <cstdint>

#include "ir/tensor.h"

namespace dnnx::int8_epilogue {

// One output row's requantization: v = float(sum + ibias) * mult + add.
struct RowParams {
  float mult = 1, add = 0;
  int32_t ibias = 0;
};

// The clamp bounds and zero point of one quantized value.
struct QuantRange {
  int32_t zp = 0, lo = 0, hi = 0;  // lo: the type's minimum, or zp after a Relu
};

// A residual join's parameters: y = (r_scale / y_scale) (r - r_zp) + (z_scale / y_scale) (z - z_zp),
// QLinearAdd's as MLAS computes it (the two scale ratios once, then a multiply-add per value: no
// division per element; MLAS's fixed-point form of the same sum may differ by one step in a tie).
struct ResidualParams {
  float r_scale, z_scale, y_scale;
  int32_t r_zp, z_zp;
  float r_ratio() const { return r_scale / y_scale; }
  float z_ratio() const { return z_scale / y_scale; }
};

// Type t's range (int8 or uint8) around zero point zp, floored at zp after a Relu.
QuantRange range_of(DType t, int32_t zp, bool relu);

// out[j] = clamp(round_half_even(v_j) + zp): the quantized values as int32.
void requantize(const int32_t* acc, int64_t n, const RowParams& p, const QuantRange& q, int32_t* out);
// q[j] = QLinearAdd of r = q[j] (r's range already applied) and z[j] (as int32), into y's range.
void add_residual(int32_t* q, const int32_t* z, int64_t n, const ResidualParams& p, const QuantRange& out);
// Whether requantize_bytes and residual_bytes run (AVX-512): else the caller uses the two above.
bool has_byte_epilogues();
// requantize, narrowed to Y's bytes in the register.
void requantize_bytes(const int32_t* acc, int64_t n, const RowParams& p, const QuantRange& q, uint8_t* out);
// requantize into r's range, then add_residual with z (8-bit, signed or not), to Y's bytes.
void residual_bytes(const int32_t* acc, int64_t n, const RowParams& p, const QuantRange& rq, const void* z,
                    bool z_signed, const ResidualParams& rp, const QuantRange& yq, uint8_t* out);
// requantize_bytes and residual_bytes over one GEMM tile: row r's sums at acc + r * ld, its
// parameters p[r], its output bytes (and z's) at out + r * out_ld (z + r * out_ld).
void requantize_tile_bytes(const int32_t* acc, int64_t ld, int64_t rows, int64_t cols, const RowParams* p,
                           const QuantRange& q, uint8_t* out, int64_t out_ld);
void residual_tile_bytes(const int32_t* acc, int64_t ld, int64_t rows, int64_t cols, const RowParams* p,
                         const QuantRange& rq, const void* z, bool z_signed, const ResidualParams& rp,
                         const QuantRange& yq, uint8_t* out, int64_t out_ld);

// The float-output form (no QuantizeLinear after the layer: Note [int8 float output]):
// out[j * stride] = max(0 if relu, float(acc[j] + ibias) * mult + add), mult = x_scale * w_scale[m],
// add the float bias. AVX-512 / AVX2 where stride is 1 (as the GEMM's path: DNNX_INT8_AVX2=1 takes
// AVX2); no FMA, so every form gives the same bits.
void dequantize(const int32_t* acc, int64_t n, const RowParams& p, bool relu, float* out, int64_t stride);

}  // namespace dnnx::int8_epilogue
