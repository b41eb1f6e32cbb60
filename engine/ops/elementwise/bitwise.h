// BitShift and BitwiseAnd/Or/Xor/Not on integers, written once over the element type T for
// every backend. BitShift (opset 28's meaning, which extends opset 11's unsigned one to the
// signed types): a right shift of a signed T is arithmetic; a left shift works on T's bits as
// unsigned (bits past the sign bit are lost); a shift that is negative or >= T's width gives
// what the sign fill alone gives: -1 for a right shift of a negative X, else 0.
#pragma once
#include <type_traits>

namespace dnnx {

enum class BitOp { ShiftLeft, ShiftRight, And, Or, Xor };

template <BitOp Op, class T>
inline T bit_op(T a, T b) {
  static_assert(std::is_integral_v<T>, "bit ops take integer types");
  if constexpr (Op == BitOp::And) return a & b;
  if constexpr (Op == BitOp::Or) return a | b;
  if constexpr (Op == BitOp::Xor) return a ^ b;
  using U = std::make_unsigned_t<T>;
  constexpr T kWidth = static_cast<T>(sizeof(T) * 8);
  bool in_range = b < kWidth;
  bool negative = false;  // a < 0 (the sign fill of a right shift)
  if constexpr (std::is_signed_v<T>) {
    in_range = in_range && b >= T(0);
    negative = a < T(0);
  }
  if constexpr (Op == BitOp::ShiftLeft) {
    return in_range ? static_cast<T>(static_cast<U>(static_cast<U>(a) << static_cast<U>(b))) : T(0);
  } else {  // arithmetic for signed T (C++20 guarantees it; every compiler we build with does it)
    if (!in_range) return negative ? static_cast<T>(-1) : T(0);
    return static_cast<T>(a >> b);
  }
}

}  // namespace dnnx
