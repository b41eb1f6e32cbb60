// The float classification and trigonometric kernels (float_math_kernels.h): one thread per
// element, grid-stride loops, one instantiation per kind and element type, the kind dispatched
// once per launch. Half elements are loaded into a float and the result rounded once; the
// functions are CUDA's single-precision ones (no fast-math: within 2 ulp of the CPU's std:: forms).
#include "backends/cuda/elementwise/float_math_kernels.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/element_dispatch.cuh"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

template <FloatMath K>
__device__ inline float trig_value(float x) {
  if constexpr (K == FloatMath::Sin) return sinf(x);
  if constexpr (K == FloatMath::Cos) return cosf(x);
  if constexpr (K == FloatMath::Tan) return tanf(x);
  if constexpr (K == FloatMath::Asin) return asinf(x);
  if constexpr (K == FloatMath::Acos) return acosf(x);
  if constexpr (K == FloatMath::Atan) return atanf(x);
  if constexpr (K == FloatMath::Sinh) return sinhf(x);
  if constexpr (K == FloatMath::Cosh) return coshf(x);
  if constexpr (K == FloatMath::Asinh) return asinhf(x);
  if constexpr (K == FloatMath::Acosh) return acoshf(x);
  if constexpr (K == FloatMath::Atanh) return atanhf(x);
  return x;
}

// f'(x), as float_math_slope<K, float> computes it on the CPU.
template <FloatMath K>
__device__ inline float trig_slope(float x) {
  if constexpr (K == FloatMath::Sin) return cosf(x);
  if constexpr (K == FloatMath::Cos) return -sinf(x);
  if constexpr (K == FloatMath::Tan) {
    const float c = cosf(x);
    return 1.0f / (c * c);
  }
  if constexpr (K == FloatMath::Asin) return 1.0f / sqrtf(1.0f - x * x);
  if constexpr (K == FloatMath::Acos) return -1.0f / sqrtf(1.0f - x * x);
  if constexpr (K == FloatMath::Atan) return 1.0f / (1.0f + x * x);
  if constexpr (K == FloatMath::Sinh) return coshf(x);
  if constexpr (K == FloatMath::Cosh) return sinhf(x);
  if constexpr (K == FloatMath::Asinh) return 1.0f / sqrtf(x * x + 1.0f);
  if constexpr (K == FloatMath::Acosh) return 1.0f / sqrtf(x * x - 1.0f);
  if constexpr (K == FloatMath::Atanh) return 1.0f / (1.0f - x * x);
  return 0.0f;
}

template <FloatMath K>
__global__ void trig_backward(const float* __restrict__ x, const float* __restrict__ dy, float* __restrict__ dx,
                              int64_t n) {
  DNNX_GRID_LOOP(i, n) { dx[i] = dy[i] * trig_slope<K>(x[i]); }
}

template <FloatMath K, class T>
__global__ void trig_forward(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  DNNX_GRID_LOOP(i, n) { y[i] = T(trig_value<K>(float(x[i]))); }
}

template <class T>
__global__ void float_class(const T* __restrict__ x, bool* __restrict__ y, int64_t n, bool nan, bool positive,
                            bool negative) {
  DNNX_GRID_LOOP(i, n) {
    const float v = float(x[i]);  // a half's NaN and infinities stay NaN and infinities
    y[i] = nan ? isnan(v) : isinf(v) && (v > 0.0f ? positive : negative);
  }
}

}  // namespace

bool is_trig(FloatMath kind) {
  switch (kind) {
    case FloatMath::Sin: case FloatMath::Cos: case FloatMath::Tan: case FloatMath::Asin: case FloatMath::Acos:
    case FloatMath::Atan: case FloatMath::Sinh: case FloatMath::Cosh: case FloatMath::Asinh: case FloatMath::Acosh:
    case FloatMath::Atanh: return true;
    default: return false;
  }
}

void launch_trig(FloatMath kind, const void* x, void* y, int64_t n, DType dtype, cudaStream_t stream) {
  if (n == 0) return;
  if (!is_trig(kind)) throw DeviceError("trigonometric kernel: not a trigonometric op");
  with_element(dtype, [&](auto e) {
    using T = decltype(e);
    with_float_math(kind, [&](auto tag) {
      constexpr FloatMath K = decltype(tag)::kind;
      if constexpr (K == FloatMath::Sin || K == FloatMath::Cos || K == FloatMath::Tan || K == FloatMath::Asin ||
                    K == FloatMath::Acos || K == FloatMath::Atan || K == FloatMath::Sinh || K == FloatMath::Cosh ||
                    K == FloatMath::Asinh || K == FloatMath::Acosh || K == FloatMath::Atanh) {
        trig_forward<K, T><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), n);
      }
    });
  });
  check_launch("trigonometric kernel");
}

void launch_trig_grad(FloatMath kind, const float* x, const float* dy, float* dx, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  if (!is_trig(kind)) throw DeviceError("trigonometric gradient kernel: not a trigonometric op");
  with_float_math(kind, [&](auto tag) {
    constexpr FloatMath K = decltype(tag)::kind;
    if constexpr (K == FloatMath::Sin || K == FloatMath::Cos || K == FloatMath::Tan || K == FloatMath::Asin ||
                  K == FloatMath::Acos || K == FloatMath::Atan || K == FloatMath::Sinh || K == FloatMath::Cosh ||
                  K == FloatMath::Asinh || K == FloatMath::Acosh || K == FloatMath::Atanh) {
      trig_backward<K><<<grid_for(n), kBlock, 0, stream>>>(x, dy, dx, n);
    }
  });
  check_launch("trigonometric gradient kernel");
}

void launch_float_class(const void* x, bool* y, int64_t n, DType dtype, bool nan, bool positive, bool negative,
                        cudaStream_t stream) {
  if (n == 0) return;
  with_element(dtype, [&](auto e) {
    using T = decltype(e);
    float_class<T><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(x), y, n, nan, positive, negative);
  });
  check_launch("IsNaN / IsInf kernel");
}

}  // namespace dnnx::cuda
