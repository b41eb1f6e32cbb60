// The constant Pad kernel (pad_cuda.cc) and a fill, for any element type (moved as unsigned
// integers of its width). One thread per output element, grid-stride loops.
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

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

}  // namespace

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
