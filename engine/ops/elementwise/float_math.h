// The unary float ops of issue #35 — the trigonometric and hyperbolic functions, Ceil, Floor,
// Round, Softsign, Celu, ThresholdedRelu, Swish — and Sign and Shrink, which also take integers:
// each op's value and, where it has one, its derivative, written once over the element type T
// (float32 today; float64 and float16 join with their dtypes) for every backend's kernels.
//   Round          half to even, as numpy's and onnxruntime's (std::nearbyint, FE_TONEAREST)
//   Softsign       x / (1 + |x|)
//   Celu           max(0, x) + min(0, alpha (exp(x / alpha) - 1)), alpha 1
//   ThresholdedRelu  x > alpha ? x : 0, alpha 1
//   Swish          x sigmoid(alpha x), alpha 1 (opset 24)
//   Sign           -1, 0 or 1 (NaN stays NaN)
//   Shrink         x < -lambd ? x + bias : x > lambd ? x - bias : 0 (lambd 0.5, bias 0), computed
//                  in float and cast back to T for integers, as onnxruntime does
#pragma once
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "ir/graph.h"

namespace dnnx {

enum class FloatMath {
  Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh,
  Ceil, Floor, Round, Softsign, Celu, ThresholdedRelu, Swish, Sign, Shrink,
};

// The attributes the formulas read (Celu's, ThresholdedRelu's and Swish's alpha; Shrink's).
struct FloatMathParams {
  float alpha = 1.0f;
  float lambd = 0.5f;
  float bias = 0.0f;
};

FloatMath float_math_kind(const Node& node);
FloatMathParams float_math_params(const Node& node);
// Ops whose derivative is zero almost everywhere (Ceil, Floor, Round, Sign) have no gradient.
bool float_math_differentiable(FloatMath k);

// y = f(x).
template <FloatMath K, class T>
inline T float_math_value(T x, const FloatMathParams& p) {
  if constexpr (K == FloatMath::Sign) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(x)) return x;
    }
    return x > T(0) ? T(1) : x < T(0) ? T(-1) : T(0);
  } else if constexpr (K == FloatMath::Shrink) {
    const float v = static_cast<float>(x);
    return v < -p.lambd ? static_cast<T>(v + p.bias) : v > p.lambd ? static_cast<T>(v - p.bias) : T(0);
  } else {
    static_assert(std::is_floating_point_v<T>, "the float math ops take float types");
    const T a = static_cast<T>(p.alpha);
    if constexpr (K == FloatMath::Sin) return std::sin(x);
    if constexpr (K == FloatMath::Cos) return std::cos(x);
    if constexpr (K == FloatMath::Tan) return std::tan(x);
    if constexpr (K == FloatMath::Asin) return std::asin(x);
    if constexpr (K == FloatMath::Acos) return std::acos(x);
    if constexpr (K == FloatMath::Atan) return std::atan(x);
    if constexpr (K == FloatMath::Sinh) return std::sinh(x);
    if constexpr (K == FloatMath::Cosh) return std::cosh(x);
    if constexpr (K == FloatMath::Asinh) return std::asinh(x);
    if constexpr (K == FloatMath::Acosh) return std::acosh(x);
    if constexpr (K == FloatMath::Atanh) return std::atanh(x);
    if constexpr (K == FloatMath::Ceil) return std::ceil(x);
    if constexpr (K == FloatMath::Floor) return std::floor(x);
    if constexpr (K == FloatMath::Round) return std::nearbyint(x);
    if constexpr (K == FloatMath::Softsign) return x / (T(1) + std::abs(x));
    if constexpr (K == FloatMath::Celu) {
      return std::max(T(0), x) + std::min(T(0), a * (std::exp(x / a) - T(1)));
    }
    if constexpr (K == FloatMath::ThresholdedRelu) return x > a ? x : T(0);
    if constexpr (K == FloatMath::Swish) return x / (T(1) + std::exp(-a * x));
    return x;
  }
}

// dy/dx at x (float types; the kinds float_math_differentiable allows). At Shrink's and
// ThresholdedRelu's jumps the derivative is the flat side's, 0.
template <FloatMath K, class T>
inline T float_math_slope(T x, const FloatMathParams& p) {
  const T a = static_cast<T>(p.alpha);
  if constexpr (K == FloatMath::Sin) return std::cos(x);
  if constexpr (K == FloatMath::Cos) return -std::sin(x);
  if constexpr (K == FloatMath::Tan) {
    const T c = std::cos(x);
    return T(1) / (c * c);
  }
  if constexpr (K == FloatMath::Asin) return T(1) / std::sqrt(T(1) - x * x);
  if constexpr (K == FloatMath::Acos) return -T(1) / std::sqrt(T(1) - x * x);
  if constexpr (K == FloatMath::Atan) return T(1) / (T(1) + x * x);
  if constexpr (K == FloatMath::Sinh) return std::cosh(x);
  if constexpr (K == FloatMath::Cosh) return std::sinh(x);
  if constexpr (K == FloatMath::Asinh) return T(1) / std::sqrt(x * x + T(1));
  if constexpr (K == FloatMath::Acosh) return T(1) / std::sqrt(x * x - T(1));
  if constexpr (K == FloatMath::Atanh) return T(1) / (T(1) - x * x);
  if constexpr (K == FloatMath::Softsign) {
    const T d = T(1) + std::abs(x);
    return T(1) / (d * d);
  }
  if constexpr (K == FloatMath::Celu) return x > T(0) ? T(1) : std::exp(x / a);
  if constexpr (K == FloatMath::ThresholdedRelu) return x > a ? T(1) : T(0);
  if constexpr (K == FloatMath::Swish) {  // s + a x s (1 - s), s = sigmoid(a x)
    const T s = T(1) / (T(1) + std::exp(-a * x));
    return s + a * x * s * (T(1) - s);
  }
  if constexpr (K == FloatMath::Shrink) return x < -p.lambd || x > p.lambd ? T(1) : T(0);
  return T(0);  // Ceil, Floor, Round, Sign: flat almost everywhere
}

// Calls fn(FloatMathTag<K>{}) for the kind known only at run time: each kind's loop is compiled
// once and the kind is dispatched once per call, not per element.
template <FloatMath K>
struct FloatMathTag {
  static constexpr FloatMath kind = K;
};

template <class Fn>
inline void with_float_math(FloatMath k, Fn&& fn) {
  switch (k) {
#define DNNX_FLOAT_MATH_CASE(name) \
  case FloatMath::name: fn(FloatMathTag<FloatMath::name>{}); break;
    DNNX_FLOAT_MATH_CASE(Sin) DNNX_FLOAT_MATH_CASE(Cos) DNNX_FLOAT_MATH_CASE(Tan)
    DNNX_FLOAT_MATH_CASE(Asin) DNNX_FLOAT_MATH_CASE(Acos) DNNX_FLOAT_MATH_CASE(Atan)
    DNNX_FLOAT_MATH_CASE(Sinh) DNNX_FLOAT_MATH_CASE(Cosh) DNNX_FLOAT_MATH_CASE(Asinh)
    DNNX_FLOAT_MATH_CASE(Acosh) DNNX_FLOAT_MATH_CASE(Atanh) DNNX_FLOAT_MATH_CASE(Ceil)
    DNNX_FLOAT_MATH_CASE(Floor) DNNX_FLOAT_MATH_CASE(Round) DNNX_FLOAT_MATH_CASE(Softsign)
    DNNX_FLOAT_MATH_CASE(Celu) DNNX_FLOAT_MATH_CASE(ThresholdedRelu) DNNX_FLOAT_MATH_CASE(Swish)
    DNNX_FLOAT_MATH_CASE(Sign) DNNX_FLOAT_MATH_CASE(Shrink)
#undef DNNX_FLOAT_MATH_CASE
  }
}

}  // namespace dnnx
