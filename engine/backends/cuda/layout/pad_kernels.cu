// The Pad kernels (pad_cuda.cc) and a fill, for any element type (moved as unsigned integers of
// its width). One thread per output element, grid-stride loops: constant mode reads x or the
// value; edge, reflect and wrap gather the x element ops/layout/pad.h's pad_source_index names (its
// arithmetic repeated here for the device). The gradient scatters dY back along the same indices
// with atomic adds.
//
// Note [padded rows]: the channels_last pass pads a channels-last value's channels to 16 bytes
// (Note [padded channels]) with a Pad of the last axis alone, at its end. pad_nd spent rank 64-bit
// divisions on each element: ShuffleNetV2 at fp16 (batch 64, H100) took 0.62 ms of a 2.70 ms run in
// it, for its 58-, 116- and 232-channel convs. Such a Pad (constant mode, every pad 0 but the last
// axis's end, fewer than 2^31 elements) runs pad_rows: one 32-bit division per element.
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

// pad_source_index (ops/layout/pad.cc) for modes 1..3: the cropped x keeps n elements from `crop` on.
__device__ inline int64_t mode_source(int mode, int64_t o, int64_t in, int64_t begin, int64_t end) {
  const int64_t crop = begin < 0 ? -begin : 0;
  const int64_t n = in - crop - (end < 0 ? -end : 0);
  int64_t i = o - (begin > 0 ? begin : 0);
  if (i >= 0 && i < n) return i + crop;
  if (mode == 1) {
    i = i < 0 ? 0 : n - 1;
  } else if (mode == 3) {
    i = (i % n + n) % n;
  } else if (n == 1) {
    i = 0;
  } else {
    const int64_t period = 2 * (n - 1);
    i = (i % period + period) % period;
    if (i >= n) i = period - i;
  }
  return i + crop;
}

template <class T>
__global__ void pad_gather_nd(const T* __restrict__ x, T* __restrict__ y, int64_t n, PadDims dims) {
  DNNX_GRID_LOOP(i, n) {
    int64_t rest = i, offset = 0, step = 1;
    for (int d = dims.rank - 1; d >= 0; --d) {
      offset += mode_source(dims.mode, rest % dims.out[d], dims.in[d], dims.begin[d], dims.end[d]) * step;
      rest /= dims.out[d];
      step *= dims.in[d];
    }
    y[i] = x[offset];
  }
}

// A constant-mode Pad's computed constant_value: the sum of dY over the constant's cells.
__global__ void pad_value_grad(const float* __restrict__ dy, float* d_value, int64_t n, PadDims dims) {
  DNNX_GRID_LOOP(i, n) {
    int64_t rest = i;
    bool inside = true;
    for (int d = dims.rank - 1; d >= 0; --d) {
      const int64_t src = rest % dims.out[d] - dims.begin[d];
      rest /= dims.out[d];
      inside = inside && src >= 0 && src < dims.in[d];
    }
    if (!inside) atomicAdd(d_value, dy[i]);
  }
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

// Note [padded rows]: x [rows, in] -> y [rows, out], out > in, the columns past `in` the value.
template <class T>
__global__ void pad_rows(const T* __restrict__ x, T* __restrict__ y, int32_t n, int32_t in, int32_t out,
                         const T* value, T bits) {
  const T v = value ? *value : bits;
  for (int32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const int32_t row = i / out, column = i - row * out;
    y[i] = column < in ? x[row * in + column] : v;
  }
}

// Whether a constant Pad pads only the last axis, at its end (Note [padded rows]).
bool last_axis_end_only(const PadDims& dims, int64_t n) {
  if (dims.mode != 0 || dims.rank < 1 || n >= (int64_t{1} << 31)) return false;
  for (int d = 0; d < dims.rank; ++d) {
    const bool last = d == dims.rank - 1;
    if (dims.begin[d] != 0 || (!last && dims.end[d] != 0) || (last && dims.end[d] <= 0)) return false;
  }
  return true;
}

template <class T>
void launch_pad_rows(const void* x, void* y, int64_t n, const PadDims& dims, const void* value, T bits,
                     cudaStream_t stream) {
  const int d = dims.rank - 1;
  pad_rows<T><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y),
                                                  static_cast<int32_t>(n), static_cast<int32_t>(dims.in[d]),
                                                  static_cast<int32_t>(dims.out[d]), static_cast<const T*>(value),
                                                  bits);
}

}  // namespace

void launch_pad_nd(const void* x, void* y, size_t elem, int64_t n, const PadDims& dims, const void* value,
                   uint64_t bits, cudaStream_t stream) {
  if (n == 0) return;
  if (dims.mode != 0) {
    if (elem == 8) {
      pad_gather_nd<uint64_t><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const uint64_t*>(x),
                                                                   static_cast<uint64_t*>(y), n, dims);
    } else if (elem == 4) {
      pad_gather_nd<uint32_t><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const uint32_t*>(x),
                                                                   static_cast<uint32_t*>(y), n, dims);
    } else if (elem == 2) {
      pad_gather_nd<uint16_t><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const uint16_t*>(x),
                                                                   static_cast<uint16_t*>(y), n, dims);
    } else {
      throw DeviceError("pad kernel: element size " + std::to_string(elem) + " is not supported");
    }
    check_launch("pad gather kernel");
    return;
  }
  if (last_axis_end_only(dims, n) && (elem == 4 || elem == 2)) {  // Note [padded rows]
    if (elem == 4) {
      launch_pad_rows<uint32_t>(x, y, n, dims, value, static_cast<uint32_t>(bits), stream);
    } else {
      launch_pad_rows<uint16_t>(x, y, n, dims, value, static_cast<uint16_t>(bits), stream);
    }
    check_launch("pad rows kernel");
    return;
  }
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

void launch_pad_value_grad(const float* dy, float* d_value, int64_t n, const PadDims& dims, cudaStream_t stream) {
  check(cudaMemsetAsync(d_value, 0, sizeof(float), stream), "cudaMemsetAsync");
  if (n == 0 || dims.mode != 0) return;  // the other modes read no constant
  pad_value_grad<<<grid_for(n), kBlock, 0, stream>>>(dy, d_value, n, dims);
  check_launch("pad value gradient kernel");
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
