// The requantizing epilogue's arithmetic for one element (Int8Epilogue in int8_kernels.h), shared
// by the row-major kernel (int8_kernels.cu) and the tiled NCHW one (int8_tiles.cu). The float
// steps are __fmul_rn / __fadd_rn (never contracted into an FMA: onnxruntime and the CPU kernel
// round the product and the sum apart) and __float2int_rn (round half to even, as nearbyint and
// cvtps2dq in the CPU's forms). Both kernels call these in the same order, so they give the same
// bits (the CPU's: Note [int8 on tensor cores]).
#pragma once
#include <cstdint>

#include "backends/cuda/quant/int8_kernels.h"

namespace dnnx::cuda {

__device__ inline int32_t clamp_round(float v, int32_t lo, int32_t hi) {
  return __float2int_rn(fminf(fmaxf(v, static_cast<float>(lo)), static_cast<float>(hi)));
}

// v = float(sum + ibias) * mult + add: the sum wraps as the CPU's does.
__device__ inline float epilogue_value(int32_t sum, int32_t ibias, float mult, float add) {
  const auto a = static_cast<int32_t>(static_cast<uint32_t>(sum) + static_cast<uint32_t>(ibias));
  return __fadd_rn(__fmul_rn(__int2float_rn(a), mult), add);
}

// The float output: v, 0 where a Relu takes it (v <= 0 or NaN).
__device__ inline float epilogue_float(const Int8Epilogue& p, float v) { return p.relu && !(v > 0.0f) ? 0.0f : v; }

// The 8-bit output's byte (int8 and uint8: the low byte). z: the residual's byte at y's index,
// read only with a residual.
__device__ inline uint8_t epilogue_byte(const Int8Epilogue& p, float v, uint8_t z) {
  int32_t q = 0;
  if (!p.residual) {
    q = clamp_round(v, p.y_lo - p.y_zp, p.y_hi - p.y_zp) + p.y_zp;
  } else {
    const int32_t rq = clamp_round(v, p.r_lo - p.r_zp, p.r_hi - p.r_zp);  // r - r_zp
    const int32_t zq = (p.z_signed ? static_cast<int32_t>(static_cast<int8_t>(z)) : static_cast<int32_t>(z)) - p.z_zp;
    const float sum_f = __fadd_rn(__fmul_rn(p.r_ratio, __int2float_rn(rq)), __fmul_rn(p.z_ratio, __int2float_rn(zq)));
    q = clamp_round(__fadd_rn(sum_f, static_cast<float>(p.y_zp)), p.y_lo, p.y_hi);
  }
  return static_cast<uint8_t>(q);
}

// y's element e (channel m) from its int32 sum, reading the per-channel arrays and z[e].
__device__ inline void epilogue_element(const Int8Epilogue& p, int32_t sum, int64_t m, int64_t e, void* y) {
  const float v = epilogue_value(sum, p.ibias[m], p.mult[m], p.add[m]);
  if (p.float_out) {
    static_cast<float*>(y)[e] = epilogue_float(p, v);
    return;
  }
  const uint8_t z = p.residual ? static_cast<const uint8_t*>(p.z)[e] : uint8_t{0};
  static_cast<uint8_t*>(y)[e] = epilogue_byte(p, v, z);
}

}  // namespace dnnx::cuda
