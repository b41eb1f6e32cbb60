// The Pow and PRelu kernels (pow_prelu_cuda.cc): one thread per output element, each turning its
// index into the two operands' offsets (as binary_kernels.cu's broadcast loop), arithmetic as the
// CPU's (backends/cpu/elementwise/pow_prelu_cpu.cc).
#include "backends/cuda/elementwise/pow_prelu_kernels.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/element_dispatch.cuh"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

// The offsets of output element i in a and b (rank 0: both i).
__device__ __forceinline__ void operand_offsets(int64_t i, const BroadcastDims& dims, int64_t& off_a, int64_t& off_b) {
  if (dims.rank == 0) {
    off_a = off_b = i;
    return;
  }
  int64_t rest = i;
  off_a = off_b = 0;
  for (int d = dims.rank - 1; d >= 0; --d) {  // innermost dim first
    const int64_t index = rest % dims.size[d];
    rest /= dims.size[d];
    off_a += index * dims.stride_a[d];
    off_b += index * dims.stride_b[d];
  }
}

template <PairKind K>
__device__ __forceinline__ float pair_value(float a, float b) {
  if constexpr (K == PairKind::Pow) return powf(a, b);
  return a < 0.0f ? b * a : a;
}

template <PairKind K, class T>
__global__ void pair_forward(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ y, int64_t n,
                             BroadcastDims dims) {
  DNNX_GRID_LOOP(i, n) {
    int64_t oa, ob;
    operand_offsets(i, dims, oa, ob);
    y[i] = T(pair_value<K>(float(a[oa]), float(b[ob])));
  }
}

template <PairKind K>
__global__ void pair_grad_terms(const float* __restrict__ a, const float* __restrict__ b, const float* __restrict__ y,
                                const float* __restrict__ dy, float* __restrict__ term_a, float* __restrict__ term_b,
                                int64_t n, BroadcastDims dims) {
  DNNX_GRID_LOOP(i, n) {
    int64_t oa, ob;
    operand_offsets(i, dims, oa, ob);
    const float av = a[oa], bv = b[ob], g = dy[i];
    if constexpr (K == PairKind::Pow) {
      if (term_a) term_a[i] = bv == 0.0f ? 0.0f : g * bv * powf(av, bv - 1.0f);
      if (term_b) term_b[i] = av == 0.0f && bv >= 0.0f ? 0.0f : g * y[i] * logf(av);
    } else {
      if (term_a) term_a[i] = av < 0.0f ? g * bv : g;
      if (term_b) term_b[i] = av < 0.0f ? g * av : 0.0f;
    }
  }
}

}  // namespace

void launch_pow_prelu(PairKind kind, const void* a, const void* b, void* y, int64_t n, const BroadcastDims& dims,
                      DType dtype, cudaStream_t stream) {
  if (n == 0) return;
  with_element(dtype, [&](auto e) {
    using T = decltype(e);
    const T *ta = static_cast<const T*>(a), *tb = static_cast<const T*>(b);
    T* ty = static_cast<T*>(y);
    if (kind == PairKind::Pow) {
      pair_forward<PairKind::Pow, T><<<grid_for(n), kBlock, 0, stream>>>(ta, tb, ty, n, dims);
    } else {
      pair_forward<PairKind::PRelu, T><<<grid_for(n), kBlock, 0, stream>>>(ta, tb, ty, n, dims);
    }
  });
  check_launch(kind == PairKind::Pow ? "pow kernel" : "prelu kernel");
}

void launch_pow_prelu_grad_terms(PairKind kind, const float* a, const float* b, const float* y, const float* dy,
                                 float* term_a, float* term_b, int64_t n, const BroadcastDims& dims,
                                 cudaStream_t stream) {
  if (n == 0) return;
  if (kind == PairKind::Pow) {
    pair_grad_terms<PairKind::Pow><<<grid_for(n), kBlock, 0, stream>>>(a, b, y, dy, term_a, term_b, n, dims);
  } else {
    pair_grad_terms<PairKind::PRelu><<<grid_for(n), kBlock, 0, stream>>>(a, b, y, dy, term_a, term_b, n, dims);
  }
  check_launch(kind == PairKind::Pow ? "pow gradient kernel" : "prelu gradient kernel");
}

}  // namespace dnnx::cuda
