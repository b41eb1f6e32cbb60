// The BatchNormalization (inference) kernel (batchnorm_cuda.cc): per-channel scale+shift with
// the statistics read on the device, and BatchNormalization+Relu's max(0, y) in the same pass.
// Arithmetic as the CPU kernels do it. The kernel takes float32, float16 or bfloat16 elements
// (element_dispatch.cuh: float arithmetic either way).
//
// Note [batchnorm by vectors]: the first kernel gave each element its own 64-bit channel index
// (i / plane % channels) and its own coefficients (a sqrt and a division): DenseNet-121's 62
// BatchNormalizations took 4.5 ms of a 20.3 ms tf32 run at batch 64 (H100, RESULTS_CUDA.md
// session 15), about 1 TB/s of the HBM's 3. Now a thread takes V = 4 adjacent elements of one
// plane (where the plane is a multiple of 4 and both tensors 4-element aligned, else V = 1) with
// 32-bit indices (where the tensor has fewer than 2^31 elements): one channel index, one pair of
// coefficients and one vector load and store per V elements. Each element is still
// x * s + t with the same s and t, so the values do not change. A channels-last X ([N, H, W, C],
// BatchNormalization@NHWC) comes as plane = 1: there a thread takes V = 4 adjacent channels of one
// pixel (where C is a multiple of 4), each with its own coefficients.
#include <cmath>
#include <cstdint>

#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/element_dispatch.cuh"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

// V elements of T moved as one access (8 or 16 bytes for V = 4).
template <class T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

template <bool kRelu>
__device__ __forceinline__ float finish(float v) {
  return kRelu ? (v < 0.0f ? 0.0f : v) : v;  // Relu's NaN passes through, as on the CPU
}

// Index: int32_t where the tensor has fewer than 2^31 elements, else int64_t. groups: the V-element
// groups, plane_groups: a plane's groups.
template <class T, int V, bool kRelu, class Index>
__global__ void batchnorm_groups(const T* __restrict__ x, const T* __restrict__ scale, const T* __restrict__ bias,
                                 const T* __restrict__ mean, const T* __restrict__ var, T* __restrict__ y,
                                 Index groups, Index plane_groups, Index channels, float epsilon) {
  for (Index g = blockIdx.x * Index(blockDim.x) + threadIdx.x; g < groups; g += Index(gridDim.x) * blockDim.x) {
    const Index c = g / plane_groups % channels;
    const float s = float(scale[c]) / sqrtf(float(var[c]) + epsilon);
    const float t = float(bias[c]) - float(mean[c]) * s;
    Pack<T, V> p = reinterpret_cast<const Pack<T, V>*>(x)[g];
#pragma unroll
    for (int k = 0; k < V; ++k) p.v[k] = T(finish<kRelu>(float(p.v[k]) * s + t));
    reinterpret_cast<Pack<T, V>*>(y)[g] = p;
  }
}

// plane = 1 (channels last): group g holds channels [c0, c0 + V) of one pixel, c0 = g % channel_groups * V.
template <class T, int V, bool kRelu, class Index>
__global__ void batchnorm_channel_groups(const T* __restrict__ x, const T* __restrict__ scale,
                                         const T* __restrict__ bias, const T* __restrict__ mean,
                                         const T* __restrict__ var, T* __restrict__ y, Index groups,
                                         Index channel_groups, float epsilon) {
  for (Index g = blockIdx.x * Index(blockDim.x) + threadIdx.x; g < groups; g += Index(gridDim.x) * blockDim.x) {
    const Index c0 = g % channel_groups * V;
    Pack<T, V> p = reinterpret_cast<const Pack<T, V>*>(x)[g];
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const float s = float(scale[c0 + k]) / sqrtf(float(var[c0 + k]) + epsilon);
      const float t = float(bias[c0 + k]) - float(mean[c0 + k]) * s;
      p.v[k] = T(finish<kRelu>(float(p.v[k]) * s + t));
    }
    reinterpret_cast<Pack<T, V>*>(y)[g] = p;
  }
}

template <class T, int V, bool kRelu>
void launch_channel_groups(const T* x, const T* scale, const T* bias, const T* mean, const T* var, T* y, int64_t n,
                           int64_t channels, float epsilon, cudaStream_t stream) {
  const int64_t groups = n / V, channel_groups = channels / V;
  if (n < (int64_t{1} << 31)) {
    batchnorm_channel_groups<T, V, kRelu, int32_t><<<grid_for(groups), kBlock, 0, stream>>>(
        x, scale, bias, mean, var, y, static_cast<int32_t>(groups), static_cast<int32_t>(channel_groups), epsilon);
  } else {
    batchnorm_channel_groups<T, V, kRelu, int64_t><<<grid_for(groups), kBlock, 0, stream>>>(
        x, scale, bias, mean, var, y, groups, channel_groups, epsilon);
  }
}

template <class T, int V, bool kRelu>
void launch_groups(const T* x, const T* scale, const T* bias, const T* mean, const T* var, T* y, int64_t n,
                   int64_t channels, int64_t plane, float epsilon, cudaStream_t stream) {
  const int64_t groups = n / V, plane_groups = plane / V;
  if (n < (int64_t{1} << 31)) {
    batchnorm_groups<T, V, kRelu, int32_t><<<grid_for(groups), kBlock, 0, stream>>>(
        x, scale, bias, mean, var, y, static_cast<int32_t>(groups), static_cast<int32_t>(plane_groups),
        static_cast<int32_t>(channels), epsilon);
  } else {
    batchnorm_groups<T, V, kRelu, int64_t><<<grid_for(groups), kBlock, 0, stream>>>(x, scale, bias, mean, var, y,
                                                                                     groups, plane_groups, channels,
                                                                                     epsilon);
  }
}

template <class T, bool kRelu>
void launch_typed(const T* x, const T* scale, const T* bias, const T* mean, const T* var, T* y, int64_t n,
                  int64_t channels, int64_t plane, float epsilon, cudaStream_t stream) {
  constexpr int64_t kVector = 4;
  const bool aligned = (reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(y)) % (kVector * sizeof(T)) == 0;
  if (plane == 1 && channels % kVector == 0 && aligned) {
    launch_channel_groups<T, kVector, kRelu>(x, scale, bias, mean, var, y, n, channels, epsilon, stream);
  } else if (plane % kVector == 0 && aligned) {
    launch_groups<T, kVector, kRelu>(x, scale, bias, mean, var, y, n, channels, plane, epsilon, stream);
  } else {
    launch_groups<T, 1, kRelu>(x, scale, bias, mean, var, y, n, channels, plane, epsilon, stream);
  }
}

}  // namespace

void launch_batchnorm(const void* x, const void* scale, const void* bias, const void* mean, const void* var, void* y,
                      int64_t batch, int64_t channels, int64_t plane, float epsilon, bool relu, DType dtype,
                      cudaStream_t stream) {
  const int64_t n = batch * channels * plane;
  if (n == 0) return;
  with_element(dtype, [&](auto e) {
    using T = decltype(e);
    const auto launch = relu ? launch_typed<T, true> : launch_typed<T, false>;
    launch(static_cast<const T*>(x), static_cast<const T*>(scale), static_cast<const T*>(bias),
           static_cast<const T*>(mean), static_cast<const T*>(var), static_cast<T*>(y), n, channels, plane, epsilon,
           stream);
  });
  check_launch("batchnorm kernel");
}

}  // namespace dnnx::cuda
