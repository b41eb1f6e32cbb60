// The float8 types and float4e2m1 (Note [dtypes] in tensor.h) to and from wider floats, as
// ml_dtypes and onnx's reference Cast convert them: round to nearest even from the exact value;
// with `saturate`, a value past the largest finite one (infinities included) becomes that value
// (onnx's saturate_cast clips first); without, it becomes inf where the type has one (e5m2) and
// NaN otherwise. float4e2m1 has neither inf nor NaN: it always saturates, and NaN becomes
// ml_dtypes' answer for it (see below).
#include <algorithm>
#include <cmath>

#include "ir/tensor.h"

namespace dnnx {

namespace {

struct MiniFormat {
  int exponent_bits, mantissa_bits, bias;
  bool has_inf;    // e5m2: exponent all ones, mantissa 0
  bool nan_0x80;   // the fnuz types: 0x80 is the one NaN, and there is no -0
  bool has_nan;    // float4e2m1 has none
  double max;      // the largest finite value
};

MiniFormat format_of(DType t) {
  switch (t) {
    case DType::Float8E4M3FN: return {4, 3, 7, false, false, true, 448.0};
    case DType::Float8E4M3FNUZ: return {4, 3, 8, false, true, true, 240.0};
    case DType::Float8E5M2: return {5, 2, 15, true, false, true, 57344.0};
    case DType::Float8E5M2FNUZ: return {5, 2, 16, false, true, true, 57344.0};
    default: return {2, 1, 1, false, false, false, 6.0};  // Float4E2M1
  }
}

// The NaN pattern of `f` with sign bit `sign` (0 or 1), as ml_dtypes writes it.
uint8_t nan_bits(const MiniFormat& f, uint32_t sign) {
  if (f.nan_0x80) return 0x80;
  const int width = f.exponent_bits + f.mantissa_bits;
  const uint32_t ones = (1u << width) - 1;
  return static_cast<uint8_t>((sign << width) | (f.has_inf ? ones - 1 : ones));  // e5m2: S.11111.10; e4m3fn: S.1111.111
}

}  // namespace

uint8_t float_to_minifloat(double value, DType t, bool saturate) {
  const MiniFormat f = format_of(t);
  const int width = f.exponent_bits + f.mantissa_bits;
  const uint32_t sign = std::signbit(value) ? 1u : 0u;
  const uint32_t sign_bit = sign << width;
  if (std::isnan(value)) {
    // float4e2m1 has no NaN: ml_dtypes (onnx's reference) gives a zero of the other sign.
    return f.has_nan ? nan_bits(f, sign) : static_cast<uint8_t>((sign ^ 1u) << width);
  }
  const double a = std::fabs(value);
  const int min_exponent = 1 - f.bias;  // of the normal numbers
  double rounded = a;
  if (a > 0 && std::isfinite(a)) {
    int e = 0;
    std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1): a's exponent is e - 1
    const int exponent = std::max(e - 1, min_exponent);
    const double quantum = std::ldexp(1.0, exponent - f.mantissa_bits);
    rounded = std::nearbyint(a / quantum) * quantum;  // the default rounding mode: to nearest even
  }
  if (!(rounded <= f.max)) {  // past the largest finite value (inf included)
    if (saturate || !f.has_nan) return static_cast<uint8_t>(sign_bit | float_to_minifloat(f.max, t, true));
    if (f.has_inf) return static_cast<uint8_t>(sign_bit | (((1u << f.exponent_bits) - 1) << f.mantissa_bits));
    return nan_bits(f, sign);
  }
  if (rounded == 0) return f.nan_0x80 ? 0 : static_cast<uint8_t>(sign_bit);  // fnuz: no -0
  int e = 0;
  std::frexp(rounded, &e);
  const int exponent = e - 1;
  uint32_t bits = 0;
  if (exponent < min_exponent) {  // subnormal: the mantissa counts quanta of 2^(min_exponent - M)
    bits = static_cast<uint32_t>(std::ldexp(rounded, f.mantissa_bits - min_exponent));
  } else {
    const uint32_t mantissa =
        static_cast<uint32_t>(std::ldexp(rounded, f.mantissa_bits - exponent)) - (1u << f.mantissa_bits);
    bits = (static_cast<uint32_t>(exponent + f.bias) << f.mantissa_bits) | mantissa;
  }
  return static_cast<uint8_t>(sign_bit | bits);
}

float minifloat_to_float(uint8_t bits, DType t) {
  const MiniFormat f = format_of(t);
  const int width = f.exponent_bits + f.mantissa_bits;
  const uint32_t mask = (1u << width) - 1;
  bits = static_cast<uint8_t>(bits & ((1u << (width + 1)) - 1));
  const bool negative = (bits >> width) & 1u;
  const uint32_t magnitude = bits & mask;
  if (f.nan_0x80 && bits == (1u << width)) return NAN;
  const uint32_t exponent_field = magnitude >> f.mantissa_bits, mantissa = magnitude & ((1u << f.mantissa_bits) - 1);
  const uint32_t top = (1u << f.exponent_bits) - 1;
  if (f.has_nan && !f.nan_0x80) {
    if (f.has_inf && exponent_field == top) return mantissa ? NAN : (negative ? -INFINITY : INFINITY);
    if (!f.has_inf && magnitude == mask) return NAN;  // e4m3fn: S.1111.111
  }
  const double value = exponent_field == 0
                           ? std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.mantissa_bits)
                           : std::ldexp(static_cast<double>(mantissa + (1u << f.mantissa_bits)),
                                        static_cast<int>(exponent_field) - f.bias - f.mantissa_bits);
  return static_cast<float>(negative ? -value : value);
}

}  // namespace dnnx
