// The CPU's integer matrix product, shared by every int8 op (MatMulInteger, QLinearMatMul,
// ConvInteger, QLinearConv and com.microsoft's QGemm, MatMulIntegerToFloat, ...).
//
// Note [int8 gemm]: the operands are int16 — an 8-bit value minus its zero point lies in
// [-255, 255] — and the sums int32, as onnxruntime's MLAS accumulates (exact while
// K * 255 * 255 < 2^31, K < 33025; beyond, both wrap). A plain blocked loop (rows split across
// the CPU threads, the inner loop over N vectorised by the compiler), used by the QOperator and
// dynamic ops; the fused QDQ layers have the vector int8 GEMM of int8_gemm_cpu.h (Note [int8
// gemm paths]), which falls back to this loop on a CPU without AVX2.
#pragma once
#include <cstdint>

#include "ops/quant/int_matmul.h"

namespace dnnx {

// C[M, N] = A[M, K] x B[K, N], row-major, C overwritten; on up to `workers` threads.
void gemm_s16(int64_t m, int64_t n, int64_t k, const int16_t* a, const int16_t* b, int32_t* c, int workers);

// dst[r, c] = src[r * ld + c] - zero point, rows x cols, where the zero point is zp[0]
// (PerTensor), zp[r] (PerRow) or zp[c] (PerColumn, PerBatchColumn: zp already at the batch's
// row of entries); zp == nullptr: 0.
template <class T>
void minus_zero_point(const T* src, int64_t rows, int64_t cols, int64_t ld, const T* zp, ParamSpread spread,
                      int16_t* dst) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      int32_t z = 0;
      if (zp) z = spread == ParamSpread::PerTensor ? zp[0] : spread == ParamSpread::PerRow ? zp[r] : zp[c];
      dst[r * cols + c] = static_cast<int16_t>(static_cast<int32_t>(src[r * ld + c]) - z);
    }
  }
}

// Calls fn(int8_t{}) or fn(uint8_t{}) for an 8-bit integer type.
template <class Fn>
decltype(auto) with_int8_type(DType t, Fn&& fn) {
  if (t == DType::Int8) return fn(int8_t{});
  return fn(uint8_t{});
}

}  // namespace dnnx
