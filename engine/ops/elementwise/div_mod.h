// Integer Div and Mod, and float Mod, as ONNX (and onnxruntime) define them, written once for the
// CPU kernels and the CUDA kernels (a plain header: no engine includes, so .cu files take it).
#pragma once
#include <cmath>
#include <type_traits>

#if defined(__CUDACC__)
#define DNNX_HOST_DEVICE __host__ __device__
#else
#define DNNX_HOST_DEVICE
#endif

namespace dnnx {

// Mod's `fmod` attribute:
//   Floor  fmod=0: the remainder takes the divisor's sign (Python's %): -7 mod 3 = 2. On floats
//          ONNX defined it only lately (the newest opsets: numpy.mod; before, floats required
//          fmod=1, so no older model asks for it)
//   Fmod   fmod=1: the remainder takes the dividend's sign (C's fmod and %): -7 mod 3 = -1
enum class ModKind { Floor, Fmod };

// -a, where -MIN wraps to MIN (two's complement) instead of overflowing: Neg, Abs.
template <class T>
DNNX_HOST_DEVICE inline T int_neg(T a) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(U{0} - static_cast<U>(a));
}

// a / b truncated toward zero (as C++ and onnxruntime). a / 0 gives 0 rather than a crash, and
// MIN / -1 (the one overflowing quotient) wraps to MIN.
template <class T>
DNNX_HOST_DEVICE inline T int_div(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return int_neg(a);
  }
  return static_cast<T>(a / b);
}

// The remainder of a / b under `kind`; 0 for a divisor of 0 (as int_div) or -1.
template <class T>
DNNX_HOST_DEVICE inline T int_mod(T a, T b, ModKind kind) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return 0;
    const T r = static_cast<T>(a % b);
    if (kind == ModKind::Floor && r != 0 && ((r < 0) != (b < 0))) return static_cast<T>(r + b);
    return r;
  } else {
    return static_cast<T>(a % b);  // both kinds agree on unsigned values
  }
}

// The float remainder under `kind`: fmod, or numpy.mod for Floor (a zero remainder takes the
// divisor's sign; -3 mod inf = inf; x mod 0 and inf mod x are NaN).
DNNX_HOST_DEVICE inline float float_mod(float a, float b, ModKind kind) {
  float r = fmodf(a, b);
  if (kind == ModKind::Fmod) return r;
  if (r == 0.0f) return copysignf(0.0f, b);
  if ((r < 0.0f) != (b < 0.0f)) r += b;
  return r;
}

// float_mod in float64 (the CPU's float64 Mod).
DNNX_HOST_DEVICE inline double float_mod(double a, double b, ModKind kind) {
  double r = fmod(a, b);
  if (kind == ModKind::Fmod) return r;
  if (r == 0.0) return copysign(0.0, b);
  if ((r < 0.0) != (b < 0.0)) r += b;
  return r;
}

}  // namespace dnnx
