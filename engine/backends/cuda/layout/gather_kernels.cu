// The strided gather behind Transpose (and Gemm's broadcast of C): each output element reads
// the input at the offset its index maps to, one thread per element, moved as an unsigned
// integer of the element's width.
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

template <class T>
__global__ void gather(const T* __restrict__ x, T* __restrict__ y, int64_t n, BroadcastDims dims) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t rest = i, offset = 0;
    for (int d = dims.rank - 1; d >= 0; --d) {
      offset += rest % dims.size[d] * dims.stride_a[d];
      rest /= dims.size[d];
    }
    y[i] = x[offset];
  }
}

template <class T>
void launch(const void* x, void* y, int64_t n, const BroadcastDims& dims, cudaStream_t stream) {
  gather<T><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), n, dims);
}

}  // namespace

void launch_gather(const void* x, void* y, size_t elem, int64_t n, const BroadcastDims& dims,
                   cudaStream_t stream) {
  if (n == 0) return;
  switch (elem) {
    case 1: launch<uint8_t>(x, y, n, dims, stream); break;
    case 2: launch<uint16_t>(x, y, n, dims, stream); break;
    case 4: launch<uint32_t>(x, y, n, dims, stream); break;
    case 8: launch<uint64_t>(x, y, n, dims, stream); break;
    default: throw DeviceError("gather kernel: element size " + std::to_string(elem) + " is not supported");
  }
  check_launch("gather kernel");
}

}  // namespace dnnx::cuda
