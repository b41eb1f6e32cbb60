// Add, Sub, Mul, Div as CUDA kernels: a plain elementwise loop when no operand broadcasts,
// else a strided one that turns each output index into the two operands' offsets. Float32,
// float16 or bfloat16 elements; the arithmetic is float either way.
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/runtime/element_dispatch.cuh"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

template <BinaryKind Kind>
__device__ __forceinline__ float apply(float a, float b) {
  if constexpr (Kind == BinaryKind::Add) return a + b;
  if constexpr (Kind == BinaryKind::Sub) return a - b;
  if constexpr (Kind == BinaryKind::Mul) return a * b;
  if constexpr (Kind == BinaryKind::Max) return (b > a || isnan(b)) ? b : a;  // NaN propagates, as on the CPU
  if constexpr (Kind == BinaryKind::Min) return (b < a || isnan(b)) ? b : a;
  return a / b;
}

template <BinaryKind Kind, class T>
__global__ void binary_elementwise(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    y[i] = T(apply<Kind>(float(a[i]), float(b[i])));
  }
}

template <BinaryKind Kind, class T>
__global__ void binary_broadcast(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ y, int64_t n,
                                 BroadcastDims dims) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t rest = i, off_a = 0, off_b = 0;
    for (int d = dims.rank - 1; d >= 0; --d) {  // innermost dim first
      const int64_t index = rest % dims.size[d];
      rest /= dims.size[d];
      off_a += index * dims.stride_a[d];
      off_b += index * dims.stride_b[d];
    }
    y[i] = T(apply<Kind>(float(a[off_a]), float(b[off_b])));
  }
}

template <BinaryKind Kind, class T>
void launch_typed(const void* a, const void* b, void* y, int64_t n, const BroadcastDims& dims, cudaStream_t stream) {
  const T* ta = static_cast<const T*>(a);
  const T* tb = static_cast<const T*>(b);
  T* ty = static_cast<T*>(y);
  if (dims.rank == 0) {
    binary_elementwise<Kind, T><<<grid_for(n), kBlock, 0, stream>>>(ta, tb, ty, n);
  } else {
    binary_broadcast<Kind, T><<<grid_for(n), kBlock, 0, stream>>>(ta, tb, ty, n, dims);
  }
}

template <BinaryKind Kind>
void launch(const void* a, const void* b, void* y, int64_t n, const BroadcastDims& dims, DType dtype,
            cudaStream_t stream) {
  with_element(dtype, [&](auto e) { launch_typed<Kind, decltype(e)>(a, b, y, n, dims, stream); });
}

}  // namespace

void launch_binary(BinaryKind kind, const void* a, const void* b, void* y, int64_t n,
                   const BroadcastDims& dims, DType dtype, cudaStream_t stream) {
  if (n == 0) return;
  switch (kind) {
    case BinaryKind::Add: launch<BinaryKind::Add>(a, b, y, n, dims, dtype, stream); break;
    case BinaryKind::Sub: launch<BinaryKind::Sub>(a, b, y, n, dims, dtype, stream); break;
    case BinaryKind::Mul: launch<BinaryKind::Mul>(a, b, y, n, dims, dtype, stream); break;
    case BinaryKind::Div: launch<BinaryKind::Div>(a, b, y, n, dims, dtype, stream); break;
    case BinaryKind::Max: launch<BinaryKind::Max>(a, b, y, n, dims, dtype, stream); break;
    case BinaryKind::Min: launch<BinaryKind::Min>(a, b, y, n, dims, dtype, stream); break;
  }
  check_launch("binary kernel");
}

}  // namespace dnnx::cuda
