// The Cast kernel (cast_cuda.cc): element type conversion between float32, int32, int64, bool,
// float16 and bfloat16 (the halves through float; to bool: x != 0, from bool: 0 or 1). One
// thread per output element, grid-stride loops.
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

// One element converted; float16 and bfloat16 go through float (from a half: exact; to a half:
// round to nearest even, bfloat16 keeping float32's range; half to half: both steps).
template <class To, class From>
__device__ __forceinline__ To convert(From v) {
  if constexpr (std::is_same_v<From, __half>) {
    return convert<To>(__half2float(v));
  } else if constexpr (std::is_same_v<From, __nv_bfloat16>) {
    return convert<To>(__bfloat162float(v));
  } else if constexpr (std::is_same_v<To, __half>) {
    return __float2half_rn(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(v));
  } else {
    return static_cast<To>(v);
  }
}

template <class From, class To>
__global__ void cast(const From* __restrict__ x, To* __restrict__ y, int64_t n) {
  DNNX_GRID_LOOP(i, n) { y[i] = convert<To>(x[i]); }
}

template <class From>
void cast_from(const void* x, void* y, int to, int64_t n, cudaStream_t stream) {
  const From* src = static_cast<const From*>(x);
  switch (to) {
    case 0: cast<From, float><<<grid_for(n), kBlock, 0, stream>>>(src, static_cast<float*>(y), n); break;
    case 1: cast<From, int32_t><<<grid_for(n), kBlock, 0, stream>>>(src, static_cast<int32_t*>(y), n); break;
    case 3: cast<From, __half><<<grid_for(n), kBlock, 0, stream>>>(src, static_cast<__half*>(y), n); break;
    case 4: cast<From, bool><<<grid_for(n), kBlock, 0, stream>>>(src, static_cast<bool*>(y), n); break;
    case 5:
      cast<From, __nv_bfloat16><<<grid_for(n), kBlock, 0, stream>>>(src, static_cast<__nv_bfloat16*>(y), n);
      break;
    default: cast<From, int64_t><<<grid_for(n), kBlock, 0, stream>>>(src, static_cast<int64_t*>(y), n); break;
  }
}

}  // namespace

void launch_cast(const void* x, int from, void* y, int to, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  switch (from) {
    case 0: cast_from<float>(x, y, to, n, stream); break;
    case 1: cast_from<int32_t>(x, y, to, n, stream); break;
    case 3: cast_from<__half>(x, y, to, n, stream); break;
    case 4: cast_from<bool>(x, y, to, n, stream); break;
    case 5: cast_from<__nv_bfloat16>(x, y, to, n, stream); break;
    default: cast_from<int64_t>(x, y, to, n, stream); break;
  }
  check_launch("cast kernel");
}

}  // namespace dnnx::cuda
