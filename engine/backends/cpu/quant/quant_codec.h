// The quantized element types as the CPU quantization kernels read and write them, one codec
// per storage form (Note [dtypes] in ir/tensor.h):
//   IntCodec<T>       int8, uint8, int16, uint16, int32: the integer itself; writes saturate
//   NibbleCodec<S>    int4 (S) / uint4: one per byte, the 4 bits in the low half (as Cast stores them)
//   MiniCodec         the float8 types and float4e2m1: their byte, read exactly to float32
// quantize(v, zp) is QuantizeLinear's step after the division, as onnxruntime's: integers round
// v half to even, add the zero point and saturate to the type's range (NaN gives 0, as
// onnxruntime's float -> int32 -> narrow conversion does on x86); the minifloats round v + zp
// once to the nearest even value, clipping past the range where `saturate`.
//
// Note [requantization]: an integer op with a quantized output (QLinearMatMul, QLinearConv,
// QGemm, ...) scales its int32 sum by one float32 multiplier, in_scale * weight_scale /
// out_scale (per output channel where the weight's scale is), computed in that order as
// onnxruntime computes it, and quantizes the product with quantize() above: MLAS's requantize
// step (round half to even, add the zero point, saturate).
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "ir/tensor.h"

namespace dnnx {

template <class T>
struct IntCodec {
  using Stored = T;
  static constexpr bool kInteger = true;
  static constexpr int64_t kMin = std::numeric_limits<T>::min(), kMax = std::numeric_limits<T>::max();
  static int64_t read(Stored v, DType) { return v; }
  static float to_float(Stored v, DType) { return static_cast<float>(v); }
  static Stored quantize(float v, Stored zp, DType, bool) { return saturate(std::nearbyint(v) + static_cast<float>(zp)); }
  // round(v + zp) rather than round(v) + zp (they differ at ties): MLAS's QLinearAdd and QLinearMul.
  static Stored quantize_offset_first(float v, Stored zp) { return saturate(std::nearbyint(v + static_cast<float>(zp))); }
  static Stored saturate(float r) {
    if (std::isnan(r)) return 0;
    return static_cast<Stored>(std::min(std::max(r, static_cast<float>(kMin)), static_cast<float>(kMax)));
  }
};

template <bool Signed>
struct NibbleCodec {
  using Stored = uint8_t;
  static constexpr bool kInteger = true;
  static constexpr int64_t kMin = Signed ? -8 : 0, kMax = Signed ? 7 : 15;
  static int64_t read(Stored v, DType) {
    const int bits = v & 0xF;
    return Signed && bits >= 8 ? bits - 16 : bits;
  }
  static float to_float(Stored v, DType t) { return static_cast<float>(read(v, t)); }
  static Stored quantize(float v, Stored zp, DType t, bool) {
    const float r = std::nearbyint(v) + static_cast<float>(read(zp, t));
    if (std::isnan(r)) return 0;
    const float c = std::min(std::max(r, static_cast<float>(kMin)), static_cast<float>(kMax));
    return static_cast<Stored>(static_cast<int64_t>(c) & 0xF);
  }
};

struct MiniCodec {
  using Stored = uint8_t;
  static constexpr bool kInteger = false;
  static float to_float(Stored v, DType t) { return minifloat_to_float(v, t); }
  static Stored quantize(float v, Stored zp, DType t, bool saturate) {
    return float_to_minifloat(static_cast<double>(v) + minifloat_to_float(zp, t), t, saturate);
  }
};

// The types a quantization kernel entry stores (KernelEntry::dtypes): float32 and the quantized
// types; float16 and bfloat16 are widened to float32 at the kernel's edges (Note [cpu dtypes]).
inline const std::vector<DType>& quantized_types() {
  static const std::vector<DType> types = {DType::Float32, DType::Int8, DType::UInt8, DType::Int16, DType::UInt16,
                                           DType::Int4, DType::UInt4, DType::Float8E4M3FN, DType::Float8E4M3FNUZ,
                                           DType::Float8E5M2, DType::Float8E5M2FNUZ, DType::Float4E2M1};
  return types;
}

// The types an 8-bit integer op's entry stores: its int8/uint8 operands (int32 sums and float32
// scales are every kernel's, Note [cpu dtypes]).
inline const std::vector<DType>& int8_types() {
  static const std::vector<DType> types = {DType::Float32, DType::Int8, DType::UInt8};
  return types;
}

// fn(Codec{}) with the codec of quantized type `t`; false for a type with none.
template <class Fn>
bool with_quant_codec(DType t, Fn&& fn) {
  switch (t) {
    case DType::Int8: fn(IntCodec<int8_t>{}); return true;
    case DType::UInt8: fn(IntCodec<uint8_t>{}); return true;
    case DType::Int16: fn(IntCodec<int16_t>{}); return true;
    case DType::UInt16: fn(IntCodec<uint16_t>{}); return true;
    case DType::Int32: fn(IntCodec<int32_t>{}); return true;
    case DType::Int4: fn(NibbleCodec<true>{}); return true;
    case DType::UInt4: fn(NibbleCodec<false>{}); return true;
    case DType::Float8E4M3FN:
    case DType::Float8E4M3FNUZ:
    case DType::Float8E5M2:
    case DType::Float8E5M2FNUZ:
    case DType::Float4E2M1: fn(MiniCodec{}); return true;
    default: return false;
  }
}

}  // namespace dnnx
