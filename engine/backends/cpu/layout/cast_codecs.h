// The element codecs of Cast on the CPU (cast_cpu.cc says the rules): each engine dtype as its
// stored C++ type and the proxy type it computes in, read and written one element at a time.
#pragma once
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "backends/cpu/runtime/element_type.h"

namespace dnnx {

template <class T>
struct Number {  // a type with C++ arithmetic (and bool): itself
  using Proxy = T;
  using Stored = T;
  static Proxy read(Stored v, DType) { return v; }
  template <class P>
  static Stored write(P p, DType, bool) {
    if constexpr (std::is_same_v<T, bool>) return p != P{};
    else return static_cast<T>(p);
  }
};

struct Half {  // float16 and bfloat16: their bits
  using Proxy = float;
  using Stored = uint16_t;
  static Proxy read(Stored v, DType t) { return storage_to_float(v, t); }
  template <class P>
  static Stored write(P p, DType t, bool) { return float_to_storage(static_cast<float>(p), t); }
};

struct Mini {  // the float8 types and float4e2m1: one byte
  using Proxy = float;
  using Stored = uint8_t;
  static Proxy read(Stored v, DType t) { return minifloat_to_float(v, t); }
  template <class P>
  static Stored write(P p, DType t, bool saturate) { return float_to_minifloat(static_cast<double>(p), t, saturate); }
};

template <bool Signed>
struct Nibble {  // int4 / uint4: one per byte, the 4 bits in the low half
  using Proxy = std::conditional_t<Signed, int8_t, uint8_t>;
  using Stored = uint8_t;
  static constexpr int64_t kMin = Signed ? -8 : 0, kMax = Signed ? 7 : 15;
  static Proxy read(Stored v, DType) {
    const int bits = v & 0xF;
    return static_cast<Proxy>(Signed && bits >= 8 ? bits - 16 : bits);
  }
  template <class P>
  static Stored write(P p, DType, bool) {
    if constexpr (std::is_floating_point_v<P>) {
      const double t = std::trunc(static_cast<double>(p));
      if (!(t >= kMin && t <= kMax)) return 0;
      return static_cast<Stored>(static_cast<int64_t>(t) & 0xF);
    } else {
      return static_cast<Stored>(static_cast<uint64_t>(p) & 0xF);
    }
  }
};

// fn(Codec{}) with the codec of `t` (the codecs above).
template <class Fn>
decltype(auto) with_codec(DType t, Fn&& fn) {
  switch (t) {
    case DType::Float16:
    case DType::BFloat16: return fn(Half{});
    case DType::Float8E4M3FN:
    case DType::Float8E4M3FNUZ:
    case DType::Float8E5M2:
    case DType::Float8E5M2FNUZ:
    case DType::Float4E2M1: return fn(Mini{});
    case DType::Int4: return fn(Nibble<true>{});
    case DType::UInt4: return fn(Nibble<false>{});
    case DType::Bool: return fn(Number<bool>{});
    default: return with_number(t, [&](auto v) { return fn(Number<decltype(v)>{}); });
  }
}

}  // namespace dnnx
