// Range's kernel (range_cuda.cc): y[i] = start + i * delta, start and delta read on the device
// (they may be computed values).
#include <cstdint>

#include "backends/cuda/elementwise/typed_elementwise.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

template <class T>
__global__ void range_kernel(const T* __restrict__ start, const T* __restrict__ delta, T* __restrict__ y, int64_t n) {
  const T s = *start, d = *delta;
  DNNX_GRID_LOOP(i, n) { y[i] = T(s + T(i) * d); }
}

template <class T>
void launch_typed(const void* start, const void* delta, void* y, int64_t n, cudaStream_t stream) {
  range_kernel<T><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(start), static_cast<const T*>(delta),
                                                      static_cast<T*>(y), n);
}

}  // namespace

void launch_range(ElemType type, const void* start, const void* delta, void* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  switch (type) {
    case ElemType::Float32: launch_typed<float>(start, delta, y, n, stream); break;
    case ElemType::Int32: launch_typed<int32_t>(start, delta, y, n, stream); break;
    case ElemType::Int64: launch_typed<int64_t>(start, delta, y, n, stream); break;
    case ElemType::Bool: break;  // refused by the OpDef
  }
  check_launch("range kernel");
}

}  // namespace dnnx::cuda
