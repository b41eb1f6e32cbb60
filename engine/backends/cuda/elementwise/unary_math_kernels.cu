// The unary float ops' kernels (unary_math_cuda.cc): one thread per element, grid-stride loops,
// one instantiation per kind (ops/elementwise/unary_math.h's UnaryMathTag), the kind dispatched once per
// launch. The forward takes float32, float16 or bfloat16 elements (float arithmetic either way).
#include "backends/cuda/elementwise/unary_math_kernels.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/element_dispatch.cuh"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

template <UnaryMath K, class T>
__global__ void unary_forward(const T* __restrict__ x, T* __restrict__ y, int64_t n, UnaryParams p) {
  DNNX_GRID_LOOP(i, n) { y[i] = T(unary_value<K>(float(x[i]), p)); }
}

template <UnaryMath K>
__global__ void unary_backward(const float* __restrict__ x, const float* __restrict__ y, const float* __restrict__ dy,
                               float* __restrict__ dx, int64_t n, UnaryParams p) {
  DNNX_GRID_LOOP(i, n) { dx[i] = dy[i] * unary_slope<K>(x[i], y[i], p); }
}

}  // namespace

void launch_unary_math(UnaryMath kind, const UnaryParams& params, const void* x, void* y, int64_t n, DType dtype,
                       cudaStream_t stream) {
  if (n == 0) return;
  with_element(dtype, [&](auto e) {
    using T = decltype(e);
    with_unary_math(kind, [&](auto tag) {
      unary_forward<decltype(tag)::kind, T>
          <<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), n, params);
    });
  });
  check_launch("unary math kernel");
}

void launch_unary_math_grad(UnaryMath kind, const UnaryParams& params, const float* x, const float* y,
                            const float* dy, float* dx, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  with_unary_math(kind, [&](auto tag) {
    unary_backward<decltype(tag)::kind><<<grid_for(n), kBlock, 0, stream>>>(x, y, dy, dx, n, params);
  });
  check_launch("unary math gradient kernel");
}

}  // namespace dnnx::cuda
