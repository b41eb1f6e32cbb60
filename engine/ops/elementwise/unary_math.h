// The unary float ops of issue #15 — Exp, Log, Sqrt, Reciprocal, Erf, Gelu (exact and tanh),
// HardSigmoid, HardSwish, Softplus, Mish — and Abs's float gradient: each op's value and its
// derivative, written once for every backend. The CPU kernels (backends/cpu/elementwise/unary_math_cpu.cc)
// and the CUDA kernels (backends/cuda/elementwise/unary_math_kernels.cu) both instantiate
// unary_value<K> / unary_slope<K>, so the two backends compute the same formulas; float
// arithmetic throughout (a float16 element is loaded into a float first).
#pragma once
#include <math.h>

#include "ir/graph.h"

#ifdef __CUDACC__
#define DNNX_HOST_DEVICE __host__ __device__
#else
#define DNNX_HOST_DEVICE
#endif

namespace dnnx {

enum class UnaryMath { Exp, Log, Sqrt, Reciprocal, Erf, Gelu, GeluTanh, HardSigmoid, HardSwish, Softplus, Mish, Abs };

// The attributes the formulas read: HardSigmoid's alpha and beta (ONNX's defaults 0.2, 0.5).
struct UnaryParams {
  float alpha = 0.2f;
  float beta = 0.5f;
};

// The kind and attributes of a node of one of these op types (ops/elementwise/unary_math.cc): Gelu's
// approximate="tanh" is its own kind, GeluTanh; a float Abs is UnaryMath::Abs.
UnaryMath unary_math_kind(const Node& node);
UnaryParams unary_math_params(const Node& node);

namespace unary_detail {
constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr float kInvSqrt2Pi = 0.39894228040143268f;  // 1 / sqrt(2 pi): the normal density's factor
constexpr float kTwoOverSqrtPi = 1.12837916709551257f;
constexpr float kSqrt2OverPi = 0.79788456080286536f;
constexpr float kGeluCubic = 0.044715f;

// ln(1 + e^x) without overflow for large x.
DNNX_HOST_DEVICE inline float softplus(float x) { return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x)); }
DNNX_HOST_DEVICE inline float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
}  // namespace unary_detail

// y = f(x).
template <UnaryMath K>
DNNX_HOST_DEVICE inline float unary_value(float x, const UnaryParams& p) {
  using namespace unary_detail;
  if constexpr (K == UnaryMath::Exp) return expf(x);
  if constexpr (K == UnaryMath::Log) return logf(x);
  if constexpr (K == UnaryMath::Sqrt) return sqrtf(x);
  if constexpr (K == UnaryMath::Reciprocal) return 1.0f / x;
  if constexpr (K == UnaryMath::Erf) return erff(x);
  if constexpr (K == UnaryMath::Gelu) return 0.5f * x * (1.0f + erff(x * kInvSqrt2));
  if constexpr (K == UnaryMath::GeluTanh) {
    return 0.5f * x * (1.0f + tanhf(kSqrt2OverPi * (x + kGeluCubic * x * x * x)));
  }
  if constexpr (K == UnaryMath::HardSigmoid) return fmaxf(0.0f, fminf(1.0f, p.alpha * x + p.beta));
  if constexpr (K == UnaryMath::HardSwish) return x * fmaxf(0.0f, fminf(1.0f, x / 6.0f + 0.5f));
  if constexpr (K == UnaryMath::Softplus) return softplus(x);
  if constexpr (K == UnaryMath::Mish) return x * tanhf(softplus(x));
  if constexpr (K == UnaryMath::Abs) return fabsf(x);
  return x;
}

// dy/dx at x, given y = f(x) (the kept output, where it is the cheaper form). At the kinks
// (HardSigmoid's and HardSwish's ends, Abs at 0) the subgradient is the inner side's limit
// where PyTorch takes it: HardSigmoid 0 outside the open (0, 1), Abs 0 at 0.
template <UnaryMath K>
DNNX_HOST_DEVICE inline float unary_slope(float x, float y, const UnaryParams& p) {
  using namespace unary_detail;
  if constexpr (K == UnaryMath::Exp) return y;
  if constexpr (K == UnaryMath::Log) return 1.0f / x;
  if constexpr (K == UnaryMath::Sqrt) return 0.5f / y;
  if constexpr (K == UnaryMath::Reciprocal) return -y * y;
  if constexpr (K == UnaryMath::Erf) return kTwoOverSqrtPi * expf(-x * x);
  if constexpr (K == UnaryMath::Gelu) {  // Phi(x) + x phi(x)
    return 0.5f * (1.0f + erff(x * kInvSqrt2)) + x * kInvSqrt2Pi * expf(-0.5f * x * x);
  }
  if constexpr (K == UnaryMath::GeluTanh) {
    const float t = tanhf(kSqrt2OverPi * (x + kGeluCubic * x * x * x));
    return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * x * x);
  }
  if constexpr (K == UnaryMath::HardSigmoid) {
    const float v = p.alpha * x + p.beta;
    return v > 0.0f && v < 1.0f ? p.alpha : 0.0f;
  }
  if constexpr (K == UnaryMath::HardSwish) return x < -3.0f ? 0.0f : x > 3.0f ? 1.0f : x / 3.0f + 0.5f;
  if constexpr (K == UnaryMath::Softplus) return sigmoid(x);
  if constexpr (K == UnaryMath::Mish) {  // tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2)
    const float t = tanhf(softplus(x));
    return t + x * sigmoid(x) * (1.0f - t * t);
  }
  if constexpr (K == UnaryMath::Abs) return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : 0.0f;
  return 1.0f;
}

// Calls fn(UnaryMathTag<K>{}) for the kind `k` known only at run time, so that a kernel is
// instantiated once per kind and the kind is dispatched once per call, not per element (host code).
template <UnaryMath K>
struct UnaryMathTag {
  static constexpr UnaryMath kind = K;
};

template <class Fn>
inline void with_unary_math(UnaryMath k, Fn&& fn) {
  switch (k) {
    case UnaryMath::Exp: fn(UnaryMathTag<UnaryMath::Exp>{}); break;
    case UnaryMath::Log: fn(UnaryMathTag<UnaryMath::Log>{}); break;
    case UnaryMath::Sqrt: fn(UnaryMathTag<UnaryMath::Sqrt>{}); break;
    case UnaryMath::Reciprocal: fn(UnaryMathTag<UnaryMath::Reciprocal>{}); break;
    case UnaryMath::Erf: fn(UnaryMathTag<UnaryMath::Erf>{}); break;
    case UnaryMath::Gelu: fn(UnaryMathTag<UnaryMath::Gelu>{}); break;
    case UnaryMath::GeluTanh: fn(UnaryMathTag<UnaryMath::GeluTanh>{}); break;
    case UnaryMath::HardSigmoid: fn(UnaryMathTag<UnaryMath::HardSigmoid>{}); break;
    case UnaryMath::HardSwish: fn(UnaryMathTag<UnaryMath::HardSwish>{}); break;
    case UnaryMath::Softplus: fn(UnaryMathTag<UnaryMath::Softplus>{}); break;
    case UnaryMath::Mish: fn(UnaryMathTag<UnaryMath::Mish>{}); break;
    case UnaryMath::Abs: fn(UnaryMathTag<UnaryMath::Abs>{}); break;
  }
}

}  // namespace dnnx
