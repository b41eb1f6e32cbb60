// QuantizeLinear's common case on the CPU, vectorized: float32 x, one scale and zero point, an
// int8 or uint8 y (dnnx.quantize's and quantize_static's activations). The arithmetic is
// IntCodec::quantize's (quant_codec.h), onnxruntime's MlasQuantizeLinear: v = x / scale (a
// division, as MLAS: x times 1/scale differs by an ulp at times), round half to even, plus the
// zero point, saturated; NaN gives 0. AVX-512 and AVX2 forms agree with the scalar one bit for bit;
// the int8 GEMM's path (default_int8_path(): DNNX_INT8_AVX2=1, DNNX_INT8_PORTABLE=1) picks one.
#pragma once
#include <cstdint>

namespace dnnx {

void quantize_float_to_8bit(const float* x, int64_t n, float scale, int32_t zero_point, bool is_signed, void* y);

}  // namespace dnnx
