// The Gather kernel (gather_cuda.cc): gather along one axis with int32 or int64 indices, the
// elements moved as unsigned integers of their width. One thread per output element,
// grid-stride loops. And its gradient's keys (train/keyed_row_sums.h).
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

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

template <class I>
__global__ void gather_axis_keys(const I* __restrict__ idx, int* keys, int64_t count, int64_t size) {
  DNNX_GRID_LOOP(j, count) {
    int64_t k = static_cast<int64_t>(idx[j]);
    if (k < 0) k += size;
    keys[j] = static_cast<int>(k >= 0 && k < size ? k : size);
  }
}

}  // namespace

void launch_gather_axis_keys(const void* idx, bool idx_int64, int* keys, int64_t count, int64_t size,
                             cudaStream_t stream) {
  if (count == 0) return;
  if (idx_int64) {
    gather_axis_keys<<<grid_for(count), kBlock, 0, stream>>>(static_cast<const int64_t*>(idx), keys, count, size);
  } else {
    gather_axis_keys<<<grid_for(count), kBlock, 0, stream>>>(static_cast<const int32_t*>(idx), keys, count, size);
  }
  check_launch("gather gradient keys");
}

void launch_gather_axis(const void* x, void* y, size_t elem, const void* idx, bool idx_int64, int64_t outer,
                        int64_t size, int64_t count, int64_t inner, cudaStream_t stream) {
  const int64_t n = outer * count * inner;
  if (n == 0) return;
  switch (elem) {
    case 1: gather_typed<uint8_t>(x, y, idx, idx_int64, n, size, count, inner, stream); break;  // bool
    case 2: gather_typed<uint16_t>(x, y, idx, idx_int64, n, size, count, inner, stream); break;
    case 4: gather_typed<uint32_t>(x, y, idx, idx_int64, n, size, count, inner, stream); break;
    case 8: gather_typed<uint64_t>(x, y, idx, idx_int64, n, size, count, inner, stream); break;
    default: throw DeviceError("gather kernel: element size " + std::to_string(elem) + " is not supported");
  }
  check_launch("gather kernel");
}

}  // namespace dnnx::cuda
