#include <algorithm>
#include <climits>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backends/cuda/conv/activation_value.cuh"
#include "backends/cuda/conv/depthwise_conv.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/element_dispatch.cuh"

namespace dnnx::cuda {

namespace {

constexpr size_t kMaxSharedBytes = 48 << 10;
constexpr int kMaxTileFloats = kMaxSharedBytes / sizeof(float);  // taps x channel tile
constexpr int kThreads = 256;
constexpr int64_t kMaxGridY = 65535;
constexpr int kPixels = 4;  // channels-last: adjacent outputs of one row per thread

__device__ inline float to_f(float v) { return v; }
__device__ inline float to_f(__half v) { return __half2float(v); }
__device__ inline float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class T>
__device__ inline T from_f(float v);
template <>
__device__ inline float from_f<float>(float v) { return v; }
template <>
__device__ inline __half from_f<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ inline __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// Note [depthwise activations]: Relu, or the fused conv activation (None: the sum as it is).
__device__ inline float finish(float v, const DepthwiseEpilogue& e) {
  return e.relu ? fmaxf(v, 0.0f) : conv_activation_value(e.act, v);
}

// V adjacent channels of one pixel, loaded and stored as one access (16 bytes for 8 half values
// or 4 floats).
template <class T, int V>
struct alignas(sizeof(T) * V) Pack {
  T e[V];
};

// Channels-last: y [N, OH, OW, C]. Block: blockDim.x threads of V channels each (a tile of
// blockDim.x * V channels, blockIdx.x picks it) x blockDim.y groups of kPixels adjacent outputs of
// one row; the tile's weights in shared memory as float [taps, tile], so that a thread's V
// weights of one tap are adjacent. A thread reads each tap's V weights once for its kPixels
// outputs (shared-memory traffic was the bound with one output per thread: 0.45 ms for
// ConvNeXt-T's 7x7 layers at 56x56x96, fp16, batch 64, on an H100).
template <class T, int V>
__global__ void depthwise_nhwc(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                               const T* __restrict__ z, T* __restrict__ y, DepthwiseConv2d c,
                               DepthwiseEpilogue e) {
  extern __shared__ float ws[];
  const int taps = c.kh * c.kw;
  const int tile = blockDim.x * V;
  const int c0 = blockIdx.x * tile;
  const int threads = blockDim.x * blockDim.y;
  for (int i = threadIdx.y * blockDim.x + threadIdx.x; i < taps * tile; i += threads) {
    const int k = i / taps, t = i - k * taps;  // consecutive i read consecutive taps of w (its order)
    ws[t * tile + k] = c0 + k < c.c ? to_f(w[static_cast<int64_t>(c0 + k) * taps + t]) : 0.0f;
  }
  __syncthreads();
  const int ch = c0 + threadIdx.x * V;
  if (ch >= c.c) return;  // C is a multiple of V: a thread's V channels are all in or all out
  float bias[V];
#pragma unroll
  for (int v = 0; v < V; ++v) bias[v] = b ? to_f(b[ch + v]) : 0.0f;
  const int groups_x = (c.ow + kPixels - 1) / kPixels;
  const int64_t groups = c.n * c.oh * groups_x;
  const int64_t row = static_cast<int64_t>(c.w) * c.c;
  for (int64_t g = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y; g < groups;
       g += static_cast<int64_t>(gridDim.y) * blockDim.y) {
    const int ox0 = static_cast<int>(g % groups_x) * kPixels;
    const int64_t rest = g / groups_x;
    const int oy = static_cast<int>(rest % c.oh);
    const int64_t image = rest / c.oh;
    const int pixels = min(kPixels, c.ow - ox0);
    const T* xi = x + image * c.h * row + ch;
    float acc[kPixels][V];
#pragma unroll
    for (int p = 0; p < kPixels; ++p) {
#pragma unroll
      for (int v = 0; v < V; ++v) acc[p][v] = 0.0f;
    }
    const int iy0 = oy * c.sh - c.ph, ix0 = ox0 * c.sw - c.pw;
    for (int ky = 0; ky < c.kh; ++ky) {
      const int iy = iy0 + ky * c.dh;
      if (iy < 0 || iy >= c.h) continue;
      const T* xr = xi + iy * row;
      for (int kx = 0; kx < c.kw; ++kx) {
        const float* wt = ws + (ky * c.kw + kx) * tile + threadIdx.x * V;
        float wv[V];
#pragma unroll
        for (int v = 0; v < V; ++v) wv[v] = wt[v];
#pragma unroll
        for (int p = 0; p < kPixels; ++p) {
          const int ix = ix0 + p * c.sw + kx * c.dw;
          if (p >= pixels || ix < 0 || ix >= c.w) continue;
          const Pack<T, V> xv = *reinterpret_cast<const Pack<T, V>*>(xr + static_cast<int64_t>(ix) * c.c);
#pragma unroll
          for (int v = 0; v < V; ++v) acc[p][v] = fmaf(to_f(xv.e[v]), wv[v], acc[p][v]);
        }
      }
    }
#pragma unroll
    for (int p = 0; p < kPixels; ++p) {
      if (p >= pixels) break;
      const int64_t at = ((image * c.oh + oy) * c.ow + ox0 + p) * c.c + ch;
      Pack<T, V> out;
      if (z) {
        const Pack<T, V> zv = *reinterpret_cast<const Pack<T, V>*>(z + at);
#pragma unroll
        for (int v = 0; v < V; ++v) acc[p][v] = acc[p][v] + bias[v] + to_f(zv.e[v]);
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v) acc[p][v] += bias[v];
      }
#pragma unroll
      for (int v = 0; v < V; ++v) out.e[v] = from_f<T>(finish(acc[p][v], e));
      *reinterpret_cast<Pack<T, V>*>(y + at) = out;
    }
  }
}

// ONNX's layout: y [N, C, OH, OW]. One block column per plane (image, channel), blockIdx.x; the
// channel's weights in shared memory; each thread one output of the plane at a time.
template <class T>
__global__ void depthwise_nchw(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                               const T* __restrict__ z, T* __restrict__ y, DepthwiseConv2d c,
                               DepthwiseEpilogue e) {
  extern __shared__ float ws[];
  const int64_t plane = blockIdx.x;
  const int ch = static_cast<int>(plane % c.c);
  const int taps = c.kh * c.kw;
  for (int i = threadIdx.x; i < taps; i += blockDim.x) ws[i] = to_f(w[static_cast<int64_t>(ch) * taps + i]);
  __syncthreads();
  const float bias = b ? to_f(b[ch]) : 0.0f;
  const T* xp = x + plane * c.h * c.w;
  const int outs = c.oh * c.ow;
  for (int o = blockIdx.y * blockDim.x + threadIdx.x; o < outs; o += gridDim.y * blockDim.x) {
    const int oy = o / c.ow, ox = o - oy * c.ow;
    const int iy0 = oy * c.sh - c.ph, ix0 = ox * c.sw - c.pw;
    float acc = 0.0f;
    for (int ky = 0; ky < c.kh; ++ky) {
      const int iy = iy0 + ky * c.dh;
      if (iy < 0 || iy >= c.h) continue;
      for (int kx = 0; kx < c.kw; ++kx) {
        const int ix = ix0 + kx * c.dw;
        if (ix < 0 || ix >= c.w) continue;
        acc = fmaf(to_f(xp[iy * c.w + ix]), ws[ky * c.kw + kx], acc);
      }
    }
    const int64_t at = plane * outs + o;
    float r = acc + bias;
    if (z) r += to_f(z[at]);
    y[at] = from_f<T>(finish(r, e));
  }
}

bool aligned(const void* p, size_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

// The widest V (channels per access, 16 bytes at most) that divides C and that every pointer
// read or written in V-channel packs is aligned to.
template <class T>
int pack_width(const DepthwiseConv2d& c, const void* x, const void* z, const void* y) {
  for (int v = static_cast<int>(16 / sizeof(T)); v > 1; v /= 2) {
    const size_t bytes = sizeof(T) * v;
    if (c.c % v == 0 && aligned(x, bytes) && aligned(y, bytes) && (!z || aligned(z, bytes))) return v;
  }
  return 1;
}

template <class T, int V>
void launch_nhwc(const T* x, const T* w, const T* b, const T* z, T* y, const DepthwiseConv2d& c,
                 const DepthwiseEpilogue& e, cudaStream_t stream) {
  const int taps = c.kh * c.kw;
  const int vectors = (c.c + V - 1) / V;
  const int tx = std::max(1, std::min({vectors, 32, kMaxTileFloats / (taps * V)}));
  const int ty = std::max(1, kThreads / tx);
  const int64_t groups = c.n * c.oh * ((c.ow + kPixels - 1) / kPixels);
  const dim3 grid(static_cast<unsigned>((vectors + tx - 1) / tx),
                  static_cast<unsigned>(std::min<int64_t>(kMaxGridY, (groups + ty - 1) / ty)));
  const size_t shared = static_cast<size_t>(taps) * tx * V * sizeof(float);
  depthwise_nhwc<T, V><<<grid, dim3(tx, ty), shared, stream>>>(x, w, b, z, y, c, e);
}

template <class T>
void launch_typed(const void* xv, const void* wv, const void* bv, const void* zv, void* yv, const DepthwiseConv2d& c,
                  const DepthwiseEpilogue& e, cudaStream_t stream) {
  const T* x = static_cast<const T*>(xv);
  const T* w = static_cast<const T*>(wv);
  const T* b = static_cast<const T*>(bv);
  const T* z = static_cast<const T*>(zv);
  T* y = static_cast<T*>(yv);
  if (!c.channels_last) {
    const int outs = c.oh * c.ow;
    const int threads = std::min(kThreads, (outs + 31) / 32 * 32);
    const dim3 grid(static_cast<unsigned>(c.n * c.c),
                    static_cast<unsigned>(std::min<int64_t>(kMaxGridY, (outs + threads - 1) / threads)));
    depthwise_nchw<T><<<grid, threads, static_cast<size_t>(c.kh) * c.kw * sizeof(float), stream>>>(x, w, b, z, y, c,
                                                                                                  e);
    return;
  }
  switch (pack_width<T>(c, x, z, y)) {
    case 8: launch_nhwc<T, 8>(x, w, b, z, y, c, e, stream); break;
    case 4: launch_nhwc<T, 4>(x, w, b, z, y, c, e, stream); break;
    case 2: launch_nhwc<T, 2>(x, w, b, z, y, c, e, stream); break;
    default: launch_nhwc<T, 1>(x, w, b, z, y, c, e, stream); break;
  }
}

}  // namespace

bool depthwise_conv_supported(const DepthwiseConv2d& c) {
  if (c.n <= 0 || c.c <= 0 || c.oh <= 0 || c.ow <= 0 || c.h <= 0 || c.w <= 0 || c.kh <= 0 || c.kw <= 0) return false;
  const int64_t taps = int64_t{c.kh} * c.kw;
  if (taps * 8 > kMaxTileFloats) return false;  // one tile of the widest pack fits in shared memory
  // int offsets inside one image and one plane; grid.x (planes in ONNX's layout) < 2^31
  const int64_t image = int64_t{c.h} * c.w * c.c, out_image = int64_t{c.oh} * c.ow * c.c;
  return image <= INT_MAX && out_image <= INT_MAX && c.n * c.c <= INT_MAX;
}

void launch_depthwise_conv(const void* x, const void* w, const void* b, const void* z, void* y,
                           const DepthwiseConv2d& c, const DepthwiseEpilogue& epilogue, cudaStream_t stream) {
  with_element(c.dtype, [&](auto t) { launch_typed<decltype(t)>(x, w, b, z, y, c, epilogue, stream); });
  check_launch("depthwise convolution kernel");
}

}  // namespace dnnx::cuda
