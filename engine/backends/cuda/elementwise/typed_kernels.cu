// The typed elementwise kernels (typed_elementwise.h): one grid-stride kernel per op and element
// type, reading each operand through the merged broadcast strides (rank 0: the same index).
// Only the pairs an op defines are instantiated (arithmetic on numbers, logic on bool).
#include <cstdint>
#include <type_traits>

#include "backends/cuda/elementwise/typed_elementwise.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/runtime/launch.cuh"
#include "ops/elementwise/div_mod.h"

namespace dnnx::cuda {

namespace {

constexpr bool is_arith(TypedBinary op) { return op <= TypedBinary::ModFmod; }
constexpr bool is_logic(TypedBinary op) { return op >= TypedBinary::And; }

// Whether `Op` is defined on T (so that nothing else is instantiated).
template <TypedBinary Op, class T>
constexpr bool defined_on() {
  if constexpr (is_logic(Op)) return std::is_same_v<T, bool>;
  if constexpr (is_arith(Op)) return !std::is_same_v<T, bool>;
  return Op == TypedBinary::Equal || !std::is_same_v<T, bool>;
}

template <TypedBinary Op, class T>
__device__ __forceinline__ auto apply(T a, T b) {
  if constexpr (Op == TypedBinary::Add) return T(a + b);
  if constexpr (Op == TypedBinary::Sub) return T(a - b);
  if constexpr (Op == TypedBinary::Mul) return T(a * b);
  if constexpr (Op == TypedBinary::Div) {
    if constexpr (std::is_integral_v<T>) return int_div(a, b);
    else return T(a / b);
  }
  if constexpr (Op == TypedBinary::ModFloor || Op == TypedBinary::ModFmod) {
    constexpr ModKind kind = Op == TypedBinary::ModFloor ? ModKind::Floor : ModKind::Fmod;
    if constexpr (std::is_integral_v<T>) return int_mod(a, b, kind);
    else return float_mod(a, b, kind);
  }
  if constexpr (Op == TypedBinary::Equal) return bool(a == b);
  if constexpr (Op == TypedBinary::Less) return bool(a < b);
  if constexpr (Op == TypedBinary::Greater) return bool(a > b);
  if constexpr (Op == TypedBinary::LessOrEqual) return bool(a <= b);
  if constexpr (Op == TypedBinary::GreaterOrEqual) return bool(a >= b);
  if constexpr (Op == TypedBinary::And) return bool(a && b);
  if constexpr (Op == TypedBinary::Or) return bool(a || b);
  if constexpr (Op == TypedBinary::Xor) return bool(a != b);
}

template <TypedBinary Op, class T, class Out>
__global__ void typed_binary(const T* __restrict__ a, const T* __restrict__ b, Out* __restrict__ y, int64_t n,
                             BroadcastDims dims) {
  DNNX_GRID_LOOP(i, n) {
    int64_t off_a = i, off_b = i;
    if (dims.rank > 0) {
      int64_t rest = i;
      off_a = off_b = 0;
      for (int d = dims.rank - 1; d >= 0; --d) {  // innermost dim first
        const int64_t index = rest % dims.size[d];
        rest /= dims.size[d];
        off_a += index * dims.stride_a[d];
        off_b += index * dims.stride_b[d];
      }
    }
    y[i] = apply<Op>(a[off_a], b[off_b]);
  }
}

template <TypedBinary Op, class T>
void launch_binary_typed(const void* a, const void* b, void* y, int64_t n, const BroadcastDims& dims,
                         cudaStream_t stream) {
  if constexpr (defined_on<Op, T>()) {
    using Out = std::conditional_t<is_arith(Op), T, bool>;
    typed_binary<Op, T, Out><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(a), static_cast<const T*>(b),
                                                                 static_cast<Out*>(y), n, dims);
  }
}

template <TypedBinary Op>
void launch_binary_op(ElemType in, const void* a, const void* b, void* y, int64_t n, const BroadcastDims& dims,
                      cudaStream_t stream) {
  switch (in) {
    case ElemType::Float32: launch_binary_typed<Op, float>(a, b, y, n, dims, stream); break;
    case ElemType::Int32: launch_binary_typed<Op, int32_t>(a, b, y, n, dims, stream); break;
    case ElemType::Int64: launch_binary_typed<Op, int64_t>(a, b, y, n, dims, stream); break;
    case ElemType::Bool: launch_binary_typed<Op, bool>(a, b, y, n, dims, stream); break;
  }
}

template <TypedUnary Op, class T>
__device__ __forceinline__ T apply_unary(T v) {
  if constexpr (Op == TypedUnary::Not) {
    return !v;
  } else if constexpr (std::is_integral_v<T>) {
    return Op == TypedUnary::Abs && v >= 0 ? v : int_neg(v);  // MIN stays MIN
  } else {
    return Op == TypedUnary::Abs ? fabsf(v) : -v;
  }
}

template <TypedUnary Op, class T>
__global__ void typed_unary(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  DNNX_GRID_LOOP(i, n) { y[i] = apply_unary<Op>(x[i]); }
}

template <TypedUnary Op, class T>
void launch_unary_typed(const void* x, void* y, int64_t n, cudaStream_t stream) {
  typed_unary<Op, T><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), n);
}

template <TypedUnary Op>
void launch_sign(ElemType type, const void* x, void* y, int64_t n, cudaStream_t stream) {
  switch (type) {
    case ElemType::Float32: launch_unary_typed<Op, float>(x, y, n, stream); break;
    case ElemType::Int32: launch_unary_typed<Op, int32_t>(x, y, n, stream); break;
    case ElemType::Int64: launch_unary_typed<Op, int64_t>(x, y, n, stream); break;
    case ElemType::Bool: break;  // refused by the OpDef
  }
}

}  // namespace

void launch_typed_binary(TypedBinary op, ElemType in, const void* a, const void* b, void* y, int64_t n,
                         const BroadcastDims& dims, cudaStream_t stream) {
  if (n == 0) return;
  switch (op) {
#define DNNX_CASE(name) \
  case TypedBinary::name: launch_binary_op<TypedBinary::name>(in, a, b, y, n, dims, stream); break;
    DNNX_CASE(Add) DNNX_CASE(Sub) DNNX_CASE(Mul) DNNX_CASE(Div) DNNX_CASE(ModFloor) DNNX_CASE(ModFmod)
    DNNX_CASE(Equal) DNNX_CASE(Less) DNNX_CASE(Greater) DNNX_CASE(LessOrEqual) DNNX_CASE(GreaterOrEqual)
    DNNX_CASE(And) DNNX_CASE(Or) DNNX_CASE(Xor)
#undef DNNX_CASE
  }
  check_launch("typed binary kernel");
}

void launch_typed_unary(TypedUnary op, ElemType type, const void* x, void* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  switch (op) {
    case TypedUnary::Neg: launch_sign<TypedUnary::Neg>(type, x, y, n, stream); break;
    case TypedUnary::Abs: launch_sign<TypedUnary::Abs>(type, x, y, n, stream); break;
    case TypedUnary::Not: launch_unary_typed<TypedUnary::Not, bool>(x, y, n, stream); break;
  }
  check_launch("typed unary kernel");
}

}  // namespace dnnx::cuda
