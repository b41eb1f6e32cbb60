// The elementwise and small window kernels behind the real-world ops (real_ops_cuda.cc):
// BatchNormalization, LeakyRelu / Elu / Clip, AveragePool, GlobalAverage/MaxPool, LRN,
// ReduceMean, Cast, Gather and a fill. One thread per output element, grid-stride loops,
// arithmetic as the CPU kernels do it. The float kernels take float32 or float16 elements
// (element_dispatch.cuh: float arithmetic either way).
#include <cmath>
#include <type_traits>

#include <cuda_fp16.h>

#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/element_dispatch.cuh"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

#define DNNX_GRID_LOOP(i, n) \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); i += int64_t{gridDim.x} * blockDim.x)

template <class T>
__global__ void batchnorm(const T* __restrict__ x, const T* __restrict__ scale, const T* __restrict__ bias,
                          const T* __restrict__ mean, const T* __restrict__ var, T* __restrict__ y, int64_t n,
                          int64_t channels, int64_t plane, float epsilon) {
  DNNX_GRID_LOOP(i, n) {
    const int64_t c = i / plane % channels;
    const float s = float(scale[c]) / sqrtf(float(var[c]) + epsilon);
    const float t = float(bias[c]) - float(mean[c]) * s;
    y[i] = T(float(x[i]) * s + t);
  }
}

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

// Taps of one dim for output index o: [lo, hi) inside X; `counted` enter the divisor.
__device__ __forceinline__ void taps(int64_t o, int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                                     bool include_pad, int64_t& start, int64_t& counted) {
  start = o * s - pb;
  counted = 0;
  for (int64_t t = 0; t < k; ++t) {
    const int64_t idx = start + t * d;
    if (include_pad ? idx < in + pe : (idx >= 0 && idx < in)) ++counted;
  }
}

template <class T>
__global__ void avg_pool(const T* __restrict__ x, T* __restrict__ y, Window3d w, int64_t pe0, int64_t pe1,
                         int64_t pe2, bool include_pad, int64_t n) {
  const int64_t out_plane = w.out[0] * w.out[1] * w.out[2];
  const int64_t in_plane = w.in[0] * w.in[1] * w.in[2];
  DNNX_GRID_LOOP(i, n) {
    const int64_t p = i / out_plane;
    const int64_t o = i % out_plane;
    const int64_t od = o / (w.out[1] * w.out[2]), oh = o / w.out[2] % w.out[1], ow = o % w.out[2];
    int64_t sd, sh, sw, cd, ch, cw;
    taps(od, w.in[0], w.kernel[0], w.stride[0], w.dilation[0], w.pad_begin[0], pe0, include_pad, sd, cd);
    taps(oh, w.in[1], w.kernel[1], w.stride[1], w.dilation[1], w.pad_begin[1], pe1, include_pad, sh, ch);
    taps(ow, w.in[2], w.kernel[2], w.stride[2], w.dilation[2], w.pad_begin[2], pe2, include_pad, sw, cw);
    const T* plane = x + p * in_plane;
    float sum = 0.0f;
    for (int64_t kd = 0; kd < w.kernel[0]; ++kd) {
      const int64_t id = sd + kd * w.dilation[0];
      if (id < 0 || id >= w.in[0]) continue;
      for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
        const int64_t ih = sh + kh * w.dilation[1];
        if (ih < 0 || ih >= w.in[1]) continue;
        for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
          const int64_t iw = sw + kw * w.dilation[2];
          if (iw < 0 || iw >= w.in[2]) continue;
          sum += float(plane[(id * w.in[1] + ih) * w.in[2] + iw]);
        }
      }
    }
    y[i] = T(sum / static_cast<float>(cd * ch * cw));
  }
}

// One block per plane: a block-wide sum (or max) in shared memory.
template <class T>
__global__ void global_pool(const T* __restrict__ x, T* __restrict__ y, int64_t planes, int64_t plane, bool max) {
  __shared__ float partial[kBlock];
  for (int64_t p = blockIdx.x; p < planes; p += gridDim.x) {
    const T* src = x + p * plane;
    float acc = max ? -INFINITY : 0.0f;
    for (int64_t j = threadIdx.x; j < plane; j += blockDim.x) {
      const float v = float(src[j]);
      acc = max ? ((v > acc || isnan(v)) ? v : acc) : acc + v;
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int width = kBlock / 2; width > 0; width /= 2) {
      if (threadIdx.x < width) {
        const float a = partial[threadIdx.x], b = partial[threadIdx.x + width];
        partial[threadIdx.x] = max ? ((b > a || isnan(b)) ? b : a) : a + b;
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) y[p] = T(max ? partial[0] : partial[0] / static_cast<float>(plane));
    __syncthreads();
  }
}

template <class T>
__global__ void lrn(const T* __restrict__ x, T* __restrict__ y, int64_t n, int64_t channels, int64_t plane,
                    int64_t before, int64_t after, float scale, float beta, float bias) {
  DNNX_GRID_LOOP(i, n) {
    const int64_t s = i % plane, c = i / plane % channels, b = i / (plane * channels);
    const T* image = x + b * channels * plane + s;
    const int64_t first = c - before < 0 ? 0 : c - before;
    const int64_t last = c + after > channels - 1 ? channels - 1 : c + after;
    float sum = 0.0f;
    for (int64_t k = first; k <= last; ++k) {
      const float v = float(image[k * plane]);
      sum += v * v;
    }
    y[i] = T(float(x[i]) * powf(bias + scale * sum, -beta));
  }
}

__device__ __forceinline__ int64_t walk(int64_t i, const BroadcastDims& dims) {
  int64_t offset = 0;
  for (int d = dims.rank - 1; d >= 0; --d) {
    offset += i % dims.size[d] * dims.stride_a[d];
    i /= dims.size[d];
  }
  return offset;
}

template <class T>
__global__ void reduce_mean(const T* __restrict__ x, T* __restrict__ y, int64_t n, BroadcastDims out,
                            BroadcastDims red, int64_t count) {
  DNNX_GRID_LOOP(i, n) {
    const T* base = x + walk(i, out);
    float sum = 0.0f;
    for (int64_t j = 0; j < count; ++j) sum += float(base[walk(j, red)]);
    y[i] = T(sum / static_cast<float>(count));
  }
}

// One element converted; float16 goes through float (to half: round to nearest even).
template <class To, class From>
__device__ __forceinline__ To convert(From v) {
  if constexpr (std::is_same_v<From, __half>) {
    return static_cast<To>(__half2float(v));
  } else if constexpr (std::is_same_v<To, __half>) {
    return __float2half_rn(static_cast<float>(v));
  } else {
    return static_cast<To>(v);
  }
}

template <class From, class To>
__global__ void cast(const From* __restrict__ x, To* __restrict__ y, int64_t n) {
  DNNX_GRID_LOOP(i, n) { y[i] = convert<To>(x[i]); }
}

template <class T, class I>
__global__ void gather_axis(const T* __restrict__ x, T* __restrict__ y, const I* __restrict__ idx, int64_t n,
                            int64_t size, int64_t count, int64_t inner) {
  DNNX_GRID_LOOP(i, n) {
    const int64_t in = i % inner, j = i / inner % count, o = i / (inner * count);
    int64_t k = static_cast<int64_t>(idx[j]);
    if (k < 0) k += size;
    y[i] = (k >= 0 && k < size) ? x[(o * size + k) * inner + in] : T{};
  }
}

template <class T>
__global__ void fill(T* __restrict__ y, int64_t n, const T* value, T bits) {
  const T v = value ? *value : bits;
  DNNX_GRID_LOOP(i, n) { y[i] = v; }
}

template <class T>
__global__ void pad_nd(const T* __restrict__ x, T* __restrict__ y, int64_t n, PadDims dims, const T* value,
                       T bits) {
  const T v = value ? *value : bits;
  DNNX_GRID_LOOP(i, n) {
    int64_t rest = i, offset = 0, step = 1;
    bool inside = true;
    for (int d = dims.rank - 1; d >= 0; --d) {
      const int64_t src = rest % dims.out[d] - dims.begin[d];
      rest /= dims.out[d];
      inside = inside && src >= 0 && src < dims.in[d];
      offset += src * step;
      step *= dims.in[d];
    }
    y[i] = inside ? x[offset] : v;
  }
}

template <class From>
void cast_from(const void* x, void* y, int to, int64_t n, cudaStream_t stream) {
  const From* src = static_cast<const From*>(x);
  switch (to) {
    case 0: cast<From, float><<<grid_for(n), kBlock, 0, stream>>>(src, static_cast<float*>(y), n); break;
    case 1: cast<From, int32_t><<<grid_for(n), kBlock, 0, stream>>>(src, static_cast<int32_t*>(y), n); break;
    case 3: cast<From, __half><<<grid_for(n), kBlock, 0, stream>>>(src, static_cast<__half*>(y), n); break;
    default: cast<From, int64_t><<<grid_for(n), kBlock, 0, stream>>>(src, static_cast<int64_t*>(y), n); break;
  }
}

template <class T>
void gather_typed(const void* x, void* y, const void* idx, bool idx_int64, int64_t n, int64_t size, int64_t count,
                  int64_t inner, cudaStream_t stream) {
  if (idx_int64) {
    gather_axis<T, int64_t><<<grid_for(n), kBlock, 0, stream>>>(
        static_cast<const T*>(x), static_cast<T*>(y), static_cast<const int64_t*>(idx), n, size, count, inner);
  } else {
    gather_axis<T, int32_t><<<grid_for(n), kBlock, 0, stream>>>(
        static_cast<const T*>(x), static_cast<T*>(y), static_cast<const int32_t*>(idx), n, size, count, inner);
  }
}

}  // namespace

void launch_batchnorm(const void* x, const void* scale, const void* bias, const void* mean, const void* var, void* y,
                      int64_t batch, int64_t channels, int64_t plane, float epsilon, bool half, cudaStream_t stream) {
  const int64_t n = batch * channels * plane;
  if (n == 0) return;
  with_element(half, [&](auto e) {
    using T = decltype(e);
    batchnorm<T><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<const T*>(scale),
                                                      static_cast<const T*>(bias), static_cast<const T*>(mean),
                                                      static_cast<const T*>(var), static_cast<T*>(y), n, channels,
                                                      plane, epsilon);
  });
  check_launch("batchnorm kernel");
}

void launch_alpha_activation(AlphaKind kind, const void* x, void* y, int64_t n, float alpha, bool half,
                             cudaStream_t stream) {
  if (n == 0) return;
  with_element(half, [&](auto e) {
    using T = decltype(e);
    if (kind == AlphaKind::LeakyRelu) {
      leaky_relu<T><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), n, alpha);
    } else {
      elu<T><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), n, alpha);
    }
  });
  check_launch("activation kernel");
}

void launch_clip(const void* x, void* y, int64_t n, float lo, float hi, const void* lo_ptr, const void* hi_ptr,
                 bool half, cudaStream_t stream) {
  if (n == 0) return;
  with_element(half, [&](auto e) {
    using T = decltype(e);
    clip<T><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), n, lo, hi,
                                                 static_cast<const T*>(lo_ptr), static_cast<const T*>(hi_ptr));
  });
  check_launch("clip kernel");
}

void launch_avg_pool(const void* x, void* y, const Window3d& w, const int64_t pad_end[3], bool count_include_pad,
                     bool half, cudaStream_t stream) {
  const int64_t n = w.planes * w.out[0] * w.out[1] * w.out[2];
  if (n == 0) return;
  with_element(half, [&](auto e) {
    using T = decltype(e);
    avg_pool<T><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), w, pad_end[0],
                                                     pad_end[1], pad_end[2], count_include_pad, n);
  });
  check_launch("average pool kernel");
}

void launch_global_pool(const void* x, void* y, int64_t planes, int64_t plane, bool max, bool half,
                        cudaStream_t stream) {
  if (planes == 0) return;
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(planes, kMaxBlocks));
  if (half) {
    global_pool<__half><<<grid, kBlock, 0, stream>>>(static_cast<const __half*>(x), static_cast<__half*>(y), planes,
                                                     plane, max);
  } else {
    global_pool<float><<<grid, kBlock, 0, stream>>>(static_cast<const float*>(x), static_cast<float*>(y), planes,
                                                    plane, max);
  }
  check_launch("global pool kernel");
}

void launch_lrn(const void* x, void* y, int64_t batch, int64_t channels, int64_t plane, int64_t size, float alpha,
                float beta, float bias, bool half, cudaStream_t stream) {
  const int64_t n = batch * channels * plane;
  if (n == 0) return;
  with_element(half, [&](auto e) {
    using T = decltype(e);
    lrn<T><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), n, channels, plane,
                                                (size - 1) / 2, size / 2, alpha / static_cast<float>(size), beta,
                                                bias);
  });
  check_launch("lrn kernel");
}

void launch_reduce_mean(const void* x, void* y, int64_t n, const BroadcastDims& out, const BroadcastDims& red,
                        int64_t count, bool half, cudaStream_t stream) {
  if (n == 0) return;
  with_element(half, [&](auto e) {
    using T = decltype(e);
    reduce_mean<T><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), n, out, red,
                                                        count);
  });
  check_launch("reduce mean kernel");
}

void launch_cast(const void* x, int from, void* y, int to, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  switch (from) {
    case 0: cast_from<float>(x, y, to, n, stream); break;
    case 1: cast_from<int32_t>(x, y, to, n, stream); break;
    case 3: cast_from<__half>(x, y, to, n, stream); break;
    default: cast_from<int64_t>(x, y, to, n, stream); break;
  }
  check_launch("cast kernel");
}

void launch_gather_axis(const void* x, void* y, size_t elem, const void* idx, bool idx_int64, int64_t outer,
                        int64_t size, int64_t count, int64_t inner, cudaStream_t stream) {
  const int64_t n = outer * count * inner;
  if (n == 0) return;
  switch (elem) {
    case 2: gather_typed<uint16_t>(x, y, idx, idx_int64, n, size, count, inner, stream); break;
    case 4: gather_typed<uint32_t>(x, y, idx, idx_int64, n, size, count, inner, stream); break;
    case 8: gather_typed<uint64_t>(x, y, idx, idx_int64, n, size, count, inner, stream); break;
    default: throw DeviceError("gather kernel: element size " + std::to_string(elem) + " is not supported");
  }
  check_launch("gather kernel");
}

void launch_pad_nd(const void* x, void* y, size_t elem, int64_t n, const PadDims& dims, const void* value,
                   uint64_t bits, cudaStream_t stream) {
  if (n == 0) return;
  if (elem == 8) {
    pad_nd<uint64_t><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const uint64_t*>(x), static_cast<uint64_t*>(y),
                                                          n, dims, static_cast<const uint64_t*>(value), bits);
  } else if (elem == 4) {
    pad_nd<uint32_t><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const uint32_t*>(x), static_cast<uint32_t*>(y),
                                                          n, dims, static_cast<const uint32_t*>(value),
                                                          static_cast<uint32_t>(bits));
  } else if (elem == 2) {
    pad_nd<uint16_t><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const uint16_t*>(x), static_cast<uint16_t*>(y),
                                                          n, dims, static_cast<const uint16_t*>(value),
                                                          static_cast<uint16_t>(bits));
  } else {
    throw DeviceError("pad kernel: element size " + std::to_string(elem) + " is not supported");
  }
  check_launch("pad kernel");
}

void launch_fill(void* y, size_t elem, int64_t n, const void* value, uint64_t bits, cudaStream_t stream) {
  if (n == 0) return;
  if (elem == 8) {
    fill<uint64_t><<<grid_for(n), kBlock, 0, stream>>>(static_cast<uint64_t*>(y), n,
                                                        static_cast<const uint64_t*>(value), bits);
  } else {
    fill<uint32_t><<<grid_for(n), kBlock, 0, stream>>>(static_cast<uint32_t*>(y), n,
                                                        static_cast<const uint32_t*>(value),
                                                        static_cast<uint32_t>(bits));
  }
  check_launch("fill kernel");
}

}  // namespace dnnx::cuda
