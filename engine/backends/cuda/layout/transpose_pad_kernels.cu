// The Transpose+Pad and Transpose+SpaceToDepth kernels (transpose_pad_cuda.cc): X [N, C, HW] -> Y [N, HW, C'] with zeros in
// channels C..C'-1, any 2- or 4-byte element (moved as unsigned integers of its width). One
// thread per output pixel (n, hw): its C reads are coalesced across the warp (consecutive hw),
// and where a pixel's C' elements are 16 bytes (8 half or 4 float32: Note [padded channels]'s
// multiples) they are written as one 16-byte store.
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

// Y [N, hs, ws, depth] from X [N, c, h, w]: slot s < 4c of pixel (i, j) is X[n, s % c, 2i + dy - top,
// 2j + dx - left] with (dy, dx) = block s / c, zero outside X and past 4c (ops/channels_last.h).
// One thread per output pixel; its `kDepth` elements go out as 16-byte stores.
template <class T, int kDepth>
__global__ void space_to_depth(const T* __restrict__ x, T* __restrict__ y, int64_t pixels, int c, int h, int w,
                               int hs, int ws, int top, int left) {
  static_assert(kDepth * sizeof(T) % sizeof(uint4) == 0, "whole 16-byte stores");
  DNNX_GRID_LOOP(p, pixels) {
    const int64_t n = p / (int64_t{hs} * ws);
    const int rest = static_cast<int>(p - n * hs * ws), i = rest / ws, j = rest - i * ws;
    const T* src = x + n * c * h * w;
    union {
      uint4 v[kDepth * sizeof(T) / sizeof(uint4)];
      T e[kDepth];
    } pixel;
    for (int s = 0; s < kDepth; ++s) {
      T v = 0;
      if (s < 4 * c) {
        const int block = s / c, ch = s - block * c;
        const int row = 2 * i + block / 2 - top, col = 2 * j + block % 2 - left;
        if (row >= 0 && row < h && col >= 0 && col < w) v = src[(static_cast<int64_t>(ch) * h + row) * w + col];
      }
      pixel.e[s] = v;
    }
    uint4* dst = reinterpret_cast<uint4*>(y + p * kDepth);
    for (size_t k = 0; k < sizeof(pixel.v) / sizeof(uint4); ++k) dst[k] = pixel.v[k];
  }
}

}  // namespace

void launch_space_to_depth(const void* x, void* y, size_t elem, const SpaceToDepthDims& d, cudaStream_t stream) {
  const int64_t pixels = d.batch * d.hs * d.ws;
  if (pixels == 0) return;
  if (d.depth != 16) throw DeviceError("space-to-depth kernel: " + std::to_string(d.depth) + " channels (16 only)");
  if (elem == 4) {
    space_to_depth<uint32_t, 16><<<grid_for(pixels), kBlock, 0, stream>>>(
        static_cast<const uint32_t*>(x), static_cast<uint32_t*>(y), pixels, d.c, d.h, d.w, d.hs, d.ws, d.top, d.left);
  } else if (elem == 2) {
    space_to_depth<uint16_t, 16><<<grid_for(pixels), kBlock, 0, stream>>>(
        static_cast<const uint16_t*>(x), static_cast<uint16_t*>(y), pixels, d.c, d.h, d.w, d.hs, d.ws, d.top, d.left);
  } else {
    throw DeviceError("space-to-depth kernel: element size " + std::to_string(elem) + " is not supported");
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
