// Window kernels that cuDNN does not cover as ONNX means them: max pooling with dilations,
// asymmetric pads or ceil_mode, and the zero padding that gives cuDNN's symmetric-pad
// convolution an asymmetric one. One thread per output element; 3-D (D, H, W) throughout. The max
// pool also takes a channels-last X ([N, H, W, C]: MaxPool@NHWC where cuDNN cannot take the
// window, such as GoogLeNet's ceil_mode pools), the channel as the innermost index.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/element_dispatch.cuh"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

// The value a window wholly in the padding gives: -inf for the float types, the lowest value of
// an 8-bit type (as the CPU's MaxPool). Every 8-bit value is exact in float.
template <class T>
__device__ float window_floor() {
  if constexpr (std::is_same_v<T, int8_t>) return -128.0f;
  else if constexpr (std::is_same_v<T, uint8_t>) return 0.0f;
  else return -INFINITY;
}

template <class T>
__global__ void max_pool(const T* __restrict__ x, T* __restrict__ y, Window3d w, int64_t channels, int64_t n) {
  const int64_t out_plane = w.out[0] * w.out[1] * w.out[2];
  const int64_t in_plane = w.in[0] * w.in[1] * w.in[2];
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t c = i % channels, q = i / channels;  // channels = 1: c = 0, q = i
    const int64_t p = q / out_plane;
    const int64_t o = q % out_plane;
    const int64_t od = o / (w.out[1] * w.out[2]), oh = o / w.out[2] % w.out[1], ow = o % w.out[2];
    const T* plane = x + p * in_plane * channels + c;
    float best = window_floor<T>();  // a window wholly in the padding keeps it, as on the CPU
    for (int64_t kd = 0; kd < w.kernel[0]; ++kd) {
      const int64_t id = od * w.stride[0] - w.pad_begin[0] + kd * w.dilation[0];
      if (id < 0 || id >= w.in[0]) continue;
      for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
        const int64_t ih = oh * w.stride[1] - w.pad_begin[1] + kh * w.dilation[1];
        if (ih < 0 || ih >= w.in[1]) continue;
        for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
          const int64_t iw = ow * w.stride[2] - w.pad_begin[2] + kw * w.dilation[2];
          if (iw < 0 || iw >= w.in[2]) continue;
          best = fmaxf(best, float(plane[((id * w.in[1] + ih) * w.in[2] + iw) * channels]));
        }
      }
    }
    y[i] = T(best);
  }
}

__global__ void pad(const float* __restrict__ x, float* __restrict__ y, int64_t n, int64_t in0, int64_t in1,
                    int64_t in2, int64_t out0, int64_t out1, int64_t out2, int64_t b0, int64_t b1, int64_t b2) {
  const int64_t out_plane = out0 * out1 * out2;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t p = i / out_plane;
    const int64_t o = i % out_plane;
    const int64_t d = o / (out1 * out2) - b0, h = o / out2 % out1 - b1, w = o % out2 - b2;
    const bool inside = d >= 0 && d < in0 && h >= 0 && h < in1 && w >= 0 && w < in2;
    y[i] = inside ? x[((p * in0 + d) * in1 + h) * in2 + w] : 0.0f;
  }
}

}  // namespace

void launch_max_pool(const void* x, void* y, const Window3d& w, DType dtype, cudaStream_t stream, int64_t channels) {
  const int64_t n = w.planes * w.out[0] * w.out[1] * w.out[2] * channels;
  if (n == 0) return;
  auto launch = [&](auto e) {
    using T = decltype(e);
    max_pool<T><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), w, channels, n);
  };
  // 8-bit: the quantized MaxPool that fuse_qdq_int8 leaves between int8 layers (Note [qdq int8])
  if (dtype == DType::Int8) {
    launch(int8_t{});
  } else if (dtype == DType::UInt8) {
    launch(uint8_t{});
  } else {
    with_element(dtype, launch);
  }
  check_launch("max pool kernel");
}

void launch_pad(const float* x, float* y, int64_t planes, const int64_t in[3], const int64_t out[3],
                const int64_t begin[3], cudaStream_t stream) {
  const int64_t n = planes * out[0] * out[1] * out[2];
  if (n == 0) return;
  pad<<<grid_for(n), kBlock, 0, stream>>>(x, y, n, in[0], in[1], in[2], out[0], out[1], out[2], begin[0],
                                          begin[1], begin[2]);
  check_launch("pad kernel");
}

}  // namespace dnnx::cuda
