// The LeakyRelu, Elu, Selu and Clip kernels (param_activation_cuda.cc); Clip's bounds may be device
// scalars. One thread per output element, grid-stride loops, arithmetic as the CPU kernels do
// it. The kernels take float32, float16 or bfloat16 elements (element_dispatch.cuh: float
// arithmetic either way).
#include <cmath>

#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/element_dispatch.cuh"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

template <class T>
__global__ void leaky_relu(const T* __restrict__ x, T* __restrict__ y, int64_t n, float alpha) {
  DNNX_GRID_LOOP(i, n) {
    const float v = float(x[i]);
    y[i] = T(v >= 0.0f ? v : alpha * v);
  }
}

template <class T>
__global__ void elu(const T* __restrict__ x, T* __restrict__ y, int64_t n, float alpha) {
  DNNX_GRID_LOOP(i, n) {
    const float v = float(x[i]);
    y[i] = T(v >= 0.0f ? v : alpha * expm1f(v));
  }
}

template <class T>
__global__ void selu(const T* __restrict__ x, T* __restrict__ y, int64_t n, float alpha, float gamma) {
  DNNX_GRID_LOOP(i, n) {
    const float v = float(x[i]);
    y[i] = T(gamma * (v > 0.0f ? v : alpha * expm1f(v)));
  }
}

template <class T>
__global__ void clip(const T* __restrict__ x, T* __restrict__ y, int64_t n, float lo, float hi, const T* lo_ptr,
                     const T* hi_ptr) {
  if (lo_ptr) lo = float(*lo_ptr);
  if (hi_ptr) hi = float(*hi_ptr);
  DNNX_GRID_LOOP(i, n) {
    const float x_i = float(x[i]);
    const float v = x_i < lo ? lo : x_i;  // max first, then min: lo > hi gives hi
    y[i] = T(v > hi ? hi : v);
  }
}

}  // namespace

void launch_alpha_activation(AlphaKind kind, const void* x, void* y, int64_t n, float alpha, float gamma, DType dtype,
                             cudaStream_t stream) {
  if (n == 0) return;
  with_element(dtype, [&](auto e) {
    using T = decltype(e);
    if (kind == AlphaKind::LeakyRelu) {
      leaky_relu<T><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), n, alpha);
    } else if (kind == AlphaKind::Selu) {
      selu<T><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), n, alpha, gamma);
    } else {
      elu<T><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), n, alpha);
    }
  });
  check_launch("activation kernel");
}

void launch_clip(const void* x, void* y, int64_t n, float lo, float hi, const void* lo_ptr, const void* hi_ptr,
                 DType dtype, cudaStream_t stream) {
  if (n == 0) return;
  with_element(dtype, [&](auto e) {
    using T = decltype(e);
    clip<T><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), n, lo, hi,
                                                 static_cast<const T*>(lo_ptr), static_cast<const T*>(hi_ptr));
  });
  check_launch("clip kernel");
}

}  // namespace dnnx::cuda
