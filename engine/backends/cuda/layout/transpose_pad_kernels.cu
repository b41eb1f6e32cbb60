// The Transpose+Pad and Transpose+SpaceToDepth kernels (transpose_pad_cuda.cc): X [N, C, HW] -> Y [N, HW, C'] with zeros in
// channels C..C'-1, any 2- or 4-byte element (moved as unsigned integers of its width). One
// thread per output pixel (n, hw): its C reads are coalesced across the warp (consecutive hw),
// and where a pixel's C' elements are 16 bytes (8 half or 4 float32: Note [padded channels]'s
// multiples) they are written as one 16-byte store.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

template <class T, int kPadded>
__global__ void transpose_pad_vector(const T* __restrict__ x, uint4* __restrict__ y, int64_t pixels, int64_t hw,
                                     int channels) {
  static_assert(sizeof(T) * kPadded == sizeof(uint4), "one pixel is one 16-byte store");
  DNNX_GRID_LOOP(p, pixels) {
    const int64_t n = p / hw, i = p - n * hw;
    const T* src = x + n * channels * hw + i;
    union {
      uint4 v;
      T e[kPadded];
    } pixel;
    pixel.v = make_uint4(0, 0, 0, 0);
    for (int c = 0; c < channels; ++c) pixel.e[c] = src[c * hw];
    y[p] = pixel.v;
  }
}

template <class T>
__global__ void transpose_pad_scalar(const T* __restrict__ x, T* __restrict__ y, int64_t pixels, int64_t hw,
                                     int channels, int padded) {
  DNNX_GRID_LOOP(p, pixels) {
    const int64_t n = p / hw, i = p - n * hw;
    const T* src = x + n * channels * hw + i;
    T* dst = y + p * padded;
    for (int c = 0; c < padded; ++c) dst[c] = c < channels ? src[c * hw] : T(0);
  }
}

template <class T>
void launch_typed(const void* x, void* y, int64_t pixels, int64_t hw, int channels, int padded, cudaStream_t stream) {
  constexpr int kVector = static_cast<int>(sizeof(uint4) / sizeof(T));
  if (padded == kVector) {
    transpose_pad_vector<T, kVector><<<grid_for(pixels), kBlock, 0, stream>>>(
        static_cast<const T*>(x), static_cast<uint4*>(y), pixels, hw, channels);
  } else {
    transpose_pad_scalar<T><<<grid_for(pixels), kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y),
                                                                     pixels, hw, channels, padded);
  }
}

// The element a Transpose+SpaceToDepth writes for one it read: the same bits, or (Note [entry
// cast]) float32 rounded to half as Cast rounds it (nearest even), kept as its 16 bits.
struct SameBits {
  template <class T>
  __device__ __forceinline__ T operator()(T v) const { return v; }
};
struct ToFloat16 {
  __device__ __forceinline__ uint16_t operator()(float v) const { return __half_as_ushort(__float2half_rn(v)); }
};
struct ToBfloat16 {
  __device__ __forceinline__ uint16_t operator()(float v) const {
    return __bfloat16_as_ushort(__float2bfloat16_rn(v));
  }
};

// Y [N, hs, ws, depth] from X [N, c, h, w]: slot s < 4c of pixel (i, j) is X[n, s % c, 2i + dy - top,
// 2j + dx - left] with (dy, dx) = block s / c, zero outside X and past 4c (ops/layout/channels_last.h).
// One thread per output pixel; its `kDepth` elements go out as 16-byte stores.
template <class In, class Out, int kDepth, class Convert>
__global__ void space_to_depth(const In* __restrict__ x, Out* __restrict__ y, int64_t pixels, int c, int h, int w,
                               int hs, int ws, int top, int left) {
  static_assert(kDepth * sizeof(Out) % sizeof(uint4) == 0, "whole 16-byte stores");
  const Convert convert;
  DNNX_GRID_LOOP(p, pixels) {
    const int64_t n = p / (int64_t{hs} * ws);
    const int rest = static_cast<int>(p - n * hs * ws), i = rest / ws, j = rest - i * ws;
    const In* src = x + n * c * h * w;
    union {
      uint4 v[kDepth * sizeof(Out) / sizeof(uint4)];
      Out e[kDepth];
    } pixel;
    for (int s = 0; s < kDepth; ++s) {
      Out v = 0;  // +0.0 in every type here
      if (s < 4 * c) {
        const int block = s / c, ch = s - block * c;
        const int row = 2 * i + block / 2 - top, col = 2 * j + block % 2 - left;
        if (row >= 0 && row < h && col >= 0 && col < w) v = convert(src[(static_cast<int64_t>(ch) * h + row) * w + col]);
      }
      pixel.e[s] = v;
    }
    uint4* dst = reinterpret_cast<uint4*>(y + p * kDepth);
    for (size_t k = 0; k < sizeof(pixel.v) / sizeof(uint4); ++k) dst[k] = pixel.v[k];
  }
}

template <class In, class Out, class Convert>
void launch_blocks(const void* x, void* y, int64_t pixels, const SpaceToDepthDims& d, cudaStream_t stream) {
  space_to_depth<In, Out, 16, Convert><<<grid_for(pixels), kBlock, 0, stream>>>(
      static_cast<const In*>(x), static_cast<Out*>(y), pixels, d.c, d.h, d.w, d.hs, d.ws, d.top, d.left);
}

}  // namespace

void launch_space_to_depth(const void* x, void* y, DType in, DType out, const SpaceToDepthDims& d,
                           cudaStream_t stream) {
  const int64_t pixels = d.batch * d.hs * d.ws;
  if (pixels == 0) return;
  if (d.depth != 16) throw DeviceError("space-to-depth kernel: " + std::to_string(d.depth) + " channels (16 only)");
  if (in == out && dtype_size(in) == 4) {
    launch_blocks<uint32_t, uint32_t, SameBits>(x, y, pixels, d, stream);
  } else if (in == out && dtype_size(in) == 2) {
    launch_blocks<uint16_t, uint16_t, SameBits>(x, y, pixels, d, stream);
  } else if (in == DType::Float32 && out == DType::Float16) {
    launch_blocks<float, uint16_t, ToFloat16>(x, y, pixels, d, stream);
  } else if (in == DType::Float32 && out == DType::BFloat16) {
    launch_blocks<float, uint16_t, ToBfloat16>(x, y, pixels, d, stream);
  } else {
    throw DeviceError(std::string("space-to-depth kernel: ") + dtype_name(in) + " to " + dtype_name(out) +
                      " is not supported");
  }
  check_launch("space-to-depth kernel");
}

void launch_transpose_pad(const void* x, void* y, size_t elem, int64_t batch, int64_t hw, int channels, int padded,
                          cudaStream_t stream) {
  const int64_t pixels = batch * hw;
  if (pixels == 0) return;
  if (elem == 4) {
    launch_typed<uint32_t>(x, y, pixels, hw, channels, padded, stream);
  } else if (elem == 2) {
    launch_typed<uint16_t>(x, y, pixels, hw, channels, padded, stream);
  } else {
    throw DeviceError("transpose+pad kernel: element size " + std::to_string(elem) + " is not supported");
  }
  check_launch("transpose+pad kernel");
}

}  // namespace dnnx::cuda
