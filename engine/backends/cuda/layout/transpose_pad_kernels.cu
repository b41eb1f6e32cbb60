// The Transpose+Pad kernel (transpose_pad_cuda.cc): X [N, C, HW] -> Y [N, HW, C'] with zeros in
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

}  // namespace

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
