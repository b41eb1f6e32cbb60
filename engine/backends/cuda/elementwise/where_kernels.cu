// Where's kernel (where_cuda.cc): out[i] = cond ? x : y, the three operands read through their
// broadcast strides over the output dims. Written once per element size (values are only copied).
#include <cstdint>

#include "backends/cuda/elementwise/typed_elementwise.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

template <class E>
__global__ void where_kernel(const bool* __restrict__ cond, const E* __restrict__ x, const E* __restrict__ y,
                             E* __restrict__ out, int64_t n, WhereDims dims) {
  DNNX_GRID_LOOP(i, n) {
    int64_t rest = i, oc = 0, ox = 0, oy = 0;
    for (int d = dims.rank - 1; d >= 0; --d) {  // innermost dim first
      const int64_t index = rest % dims.size[d];
      rest /= dims.size[d];
      oc += index * dims.stride[0][d];
      ox += index * dims.stride[1][d];
      oy += index * dims.stride[2][d];
    }
    out[i] = cond[oc] ? x[ox] : y[oy];
  }
}

template <class E>
void launch_sized(const void* cond, const void* x, const void* y, void* out, int64_t n, const WhereDims& dims,
                  cudaStream_t stream) {
  where_kernel<E><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const bool*>(cond), static_cast<const E*>(x),
                                                      static_cast<const E*>(y), static_cast<E*>(out), n, dims);
}

}  // namespace

void launch_where(const void* cond, const void* x, const void* y, void* out, size_t elem, int64_t n,
                  const WhereDims& dims, cudaStream_t stream) {
  if (n == 0) return;
  switch (elem) {
    case 1: launch_sized<uint8_t>(cond, x, y, out, n, dims, stream); break;
    case 2: launch_sized<uint16_t>(cond, x, y, out, n, dims, stream); break;
    case 8: launch_sized<uint64_t>(cond, x, y, out, n, dims, stream); break;
    default: launch_sized<uint32_t>(cond, x, y, out, n, dims, stream); break;
  }
  check_launch("where kernel");
}

}  // namespace dnnx::cuda
