// The float classification and float math kernels (float_math_kernels.h): one thread per
// element, grid-stride loops, one instantiation per kind and element type, the kind dispatched
// once per launch. Half elements are loaded into a float and the result rounded once; the
// functions are CUDA's single-precision ones (no fast-math: within 2 ulp of the CPU's std:: forms;
// Ceil, Floor, Round, Sign, Softsign, ThresholdedRelu and Shrink round as the CPU does, exactly).
#include "backends/cuda/elementwise/float_math_kernels.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/element_dispatch.cuh"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

// f(x) in float, as float_math_value<K, float> (ops/elementwise/float_math.h) computes it on the CPU.
template <FloatMath K>
__device__ inline float math_value(float x, const FloatMathParams& p) {
  const float a = p.alpha;
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
  if constexpr (K == FloatMath::Ceil) return ceilf(x);
  if constexpr (K == FloatMath::Floor) return floorf(x);
  if constexpr (K == FloatMath::Round) return rintf(x);  // half to even, as std::nearbyint in FE_TONEAREST
  if constexpr (K == FloatMath::Softsign) return x / (1.0f + fabsf(x));
  if constexpr (K == FloatMath::Celu) return fmaxf(0.0f, x) + fminf(0.0f, a * (expf(x / a) - 1.0f));
  if constexpr (K == FloatMath::ThresholdedRelu) return x > a ? x : 0.0f;
  if constexpr (K == FloatMath::Swish) return x / (1.0f + expf(-a * x));
  if constexpr (K == FloatMath::Sign) return isnan(x) ? x : x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : 0.0f;
  if constexpr (K == FloatMath::Shrink) return x < -p.lambd ? x + p.bias : x > p.lambd ? x - p.bias : 0.0f;
  return x;
}

// f'(x), as float_math_slope<K, float> computes it on the CPU (Ceil, Floor, Round and Sign have
// no gradient: float_math_differentiable).
template <FloatMath K>
__device__ inline float math_slope(float x, const FloatMathParams& p) {
  const float a = p.alpha;
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
  if constexpr (K == FloatMath::Softsign) {
    const float d = 1.0f + fabsf(x);
    return 1.0f / (d * d);
  }
  if constexpr (K == FloatMath::Celu) return x > 0.0f ? 1.0f : expf(x / a);
  if constexpr (K == FloatMath::ThresholdedRelu) return x > a ? 1.0f : 0.0f;
  if constexpr (K == FloatMath::Swish) {  // s + a x s (1 - s), s = sigmoid(a x)
    const float s = 1.0f / (1.0f + expf(-a * x));
    return s + a * x * s * (1.0f - s);
  }
  if constexpr (K == FloatMath::Shrink) return x < -p.lambd || x > p.lambd ? 1.0f : 0.0f;
  return 0.0f;
}

template <FloatMath K>
__global__ void math_backward(const float* __restrict__ x, const float* __restrict__ dy, float* __restrict__ dx,
                              int64_t n, FloatMathParams p) {
  DNNX_GRID_LOOP(i, n) { dx[i] = dy[i] * math_slope<K>(x[i], p); }
}

template <FloatMath K, class T>
__global__ void math_forward(const T* __restrict__ x, T* __restrict__ y, int64_t n, FloatMathParams p) {
  DNNX_GRID_LOOP(i, n) { y[i] = T(math_value<K>(float(x[i]), p)); }
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

void launch_float_math(FloatMath kind, const FloatMathParams& params, const void* x, void* y, int64_t n, DType dtype,
                       cudaStream_t stream) {
  if (n == 0) return;
  with_element(dtype, [&](auto e) {
    using T = decltype(e);
    with_float_math(kind, [&](auto tag) {
      math_forward<decltype(tag)::kind, T><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(x),
                                                                             static_cast<T*>(y), n, params);
    });
  });
  check_launch("float math kernel");
}

void launch_float_math_grad(FloatMath kind, const FloatMathParams& params, const float* x, const float* dy, float* dx,
                            int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  if (!float_math_differentiable(kind)) throw DeviceError("float math gradient kernel: the op has no gradient");
  with_float_math(kind, [&](auto tag) {
    math_backward<decltype(tag)::kind><<<grid_for(n), kBlock, 0, stream>>>(x, dy, dx, n, params);
  });
  check_launch("float math gradient kernel");
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
