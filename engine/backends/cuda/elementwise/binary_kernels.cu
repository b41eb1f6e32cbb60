// Add, Sub, Mul, Div, Max, Min as CUDA kernels: a plain elementwise loop when no operand
// broadcasts, else a strided one that turns each output index into the two operands' offsets
// (Note [binary by vectors]: 4 outputs a thread where it can). Float32, float16 or bfloat16
// elements; the arithmetic is float either way.
#include <cstdint>

#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/runtime/element_dispatch.cuh"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

template <BinaryKind Kind>
__device__ __forceinline__ float apply(float a, float b) {
  if constexpr (Kind == BinaryKind::Add) return a + b;
  if constexpr (Kind == BinaryKind::Sub) return a - b;
  if constexpr (Kind == BinaryKind::Mul) return a * b;
  if constexpr (Kind == BinaryKind::Max) return (b > a || isnan(b)) ? b : a;  // NaN propagates, as on the CPU
  if constexpr (Kind == BinaryKind::Min) return (b < a || isnan(b)) ? b : a;
  return a / b;
}

// V elements of T moved as one access (Note [binary by vectors]).
template <class T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

// Note [binary by vectors]: the first kernels took one element a thread, and the broadcast one
// turned each output index into the operands' offsets with 64-bit divisions, one per merged dim:
// EfficientNet-B0's squeeze-and-excitation gates (x [64, C, H, W] times s [64, C, 1, 1]) took
// 0.95 ms of an 11.3 ms fp32 run at batch 64 (H100, RESULTS_CUDA.md session 15). Now a thread
// takes V = 4 adjacent outputs where the innermost merged dim is a multiple of 4 and each operand
// is contiguous or constant along it (and every contiguous tensor 4-element aligned), one index
// decomposition per 4 outputs, with 32-bit indices where the output has fewer than 2^31
// elements. Each output is the same a op b, so the values do not change. Measured with the
// session's other glue kernels (RESULTS_CUDA.md, session 17): EfficientNet-B0 at fp32 moved within
// the machines' spread (9.11 -> 9.22 ms), so the gate's time in that profile was not the kernel's
// index math; ShuffleNetV2 and DenseNet-121, whose glue is gathers and copies, gained.
template <BinaryKind Kind, class T, int V, class Index>
__global__ void binary_elementwise(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ y, Index groups) {
  for (Index g = blockIdx.x * Index(blockDim.x) + threadIdx.x; g < groups; g += Index(gridDim.x) * blockDim.x) {
    const Pack<T, V> pa = reinterpret_cast<const Pack<T, V>*>(a)[g], pb = reinterpret_cast<const Pack<T, V>*>(b)[g];
    Pack<T, V> py;
#pragma unroll
    for (int k = 0; k < V; ++k) py.v[k] = T(apply<Kind>(float(pa.v[k]), float(pb.v[k])));
    reinterpret_cast<Pack<T, V>*>(y)[g] = py;
  }
}

// The broadcast dims in the kernel's index type; the innermost size counts groups of V.
template <class Index>
struct Dims {
  int rank;
  Index size[kMaxGlueDims], stride_a[kMaxGlueDims], stride_b[kMaxGlueDims];
};

// V outputs from x + off: V loads where the operand is contiguous along the innermost dim (its
// stride there 1), one load repeated where it is constant along it (stride 0).
template <class T, int V, class Index>
__device__ __forceinline__ Pack<T, V> load_run(const T* __restrict__ x, Index off, bool contiguous) {
  Pack<T, V> p;
  if (V == 1 || !contiguous) {
    const T v = x[off];
#pragma unroll
    for (int k = 0; k < V; ++k) p.v[k] = v;
  } else {
    p = *reinterpret_cast<const Pack<T, V>*>(x + off);
  }
  return p;
}

template <BinaryKind Kind, class T, int V, class Index>
__global__ void binary_broadcast(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ y, Index groups,
                                 Dims<Index> dims) {
  const int inner = dims.rank - 1;
  const bool a_runs = dims.stride_a[inner] == 1, b_runs = dims.stride_b[inner] == 1;
  for (Index g = blockIdx.x * Index(blockDim.x) + threadIdx.x; g < groups; g += Index(gridDim.x) * blockDim.x) {
    Index rest = g, off_a = 0, off_b = 0;
    for (int d = inner; d >= 0; --d) {  // innermost dim first
      const Index index = (rest % dims.size[d]) * (d == inner ? V : 1);
      rest /= dims.size[d];
      off_a += index * dims.stride_a[d];
      off_b += index * dims.stride_b[d];
    }
    const Pack<T, V> pa = load_run<T, V>(a, off_a, a_runs), pb = load_run<T, V>(b, off_b, b_runs);
    Pack<T, V> py;
#pragma unroll
    for (int k = 0; k < V; ++k) py.v[k] = T(apply<Kind>(float(pa.v[k]), float(pb.v[k])));
    reinterpret_cast<Pack<T, V>*>(y)[g] = py;
  }
}

template <BinaryKind Kind, class T, int V, class Index>
void launch_indexed(const T* a, const T* b, T* y, int64_t n, const BroadcastDims& dims, cudaStream_t stream) {
  const Index groups = static_cast<Index>(n / V);
  if (dims.rank == 0) {
    binary_elementwise<Kind, T, V, Index><<<grid_for(groups), kBlock, 0, stream>>>(a, b, y, groups);
    return;
  }
  Dims<Index> d{dims.rank, {}, {}, {}};
  for (int i = 0; i < dims.rank; ++i) {
    d.size[i] = static_cast<Index>(dims.size[i] / (i == dims.rank - 1 ? V : 1));
    d.stride_a[i] = static_cast<Index>(dims.stride_a[i]);
    d.stride_b[i] = static_cast<Index>(dims.stride_b[i]);
  }
  binary_broadcast<Kind, T, V, Index><<<grid_for(groups), kBlock, 0, stream>>>(a, b, y, groups, d);
}

// Whether outputs go 4 to a thread (Note [binary by vectors]).
template <class T>
bool by_vectors(const T* a, const T* b, const T* y, const BroadcastDims& dims, int64_t n) {
  constexpr int64_t kVector = 4;
  const auto aligned = [](const T* p) { return reinterpret_cast<uintptr_t>(p) % (kVector * sizeof(T)) == 0; };
  if (dims.rank == 0) return n % kVector == 0 && aligned(a) && aligned(b) && aligned(y);
  const int inner = dims.rank - 1;
  const int64_t sa = dims.stride_a[inner], sb = dims.stride_b[inner];
  return dims.size[inner] % kVector == 0 && (sa == 0 || sa == 1) && (sb == 0 || sb == 1) && aligned(y) &&
         (sa == 0 || aligned(a)) && (sb == 0 || aligned(b));
}

template <BinaryKind Kind, class T>
void launch_typed(const void* a, const void* b, void* y, int64_t n, const BroadcastDims& dims, cudaStream_t stream) {
  const T* ta = static_cast<const T*>(a);
  const T* tb = static_cast<const T*>(b);
  T* ty = static_cast<T*>(y);
  const bool small = n < (int64_t{1} << 31);
  if (by_vectors(ta, tb, ty, dims, n)) {
    if (small) return launch_indexed<Kind, T, 4, int32_t>(ta, tb, ty, n, dims, stream);
    return launch_indexed<Kind, T, 4, int64_t>(ta, tb, ty, n, dims, stream);
  }
  if (small) return launch_indexed<Kind, T, 1, int32_t>(ta, tb, ty, n, dims, stream);
  launch_indexed<Kind, T, 1, int64_t>(ta, tb, ty, n, dims, stream);
}

template <BinaryKind Kind>
void launch(const void* a, const void* b, void* y, int64_t n, const BroadcastDims& dims, DType dtype,
            cudaStream_t stream) {
  with_element(dtype, [&](auto e) { launch_typed<Kind, decltype(e)>(a, b, y, n, dims, stream); });
}

}  // namespace

void launch_binary(BinaryKind kind, const void* a, const void* b, void* y, int64_t n,
                   const BroadcastDims& dims, DType dtype, cudaStream_t stream) {
  if (n == 0) return;
  switch (kind) {
    case BinaryKind::Add: launch<BinaryKind::Add>(a, b, y, n, dims, dtype, stream); break;
    case BinaryKind::Sub: launch<BinaryKind::Sub>(a, b, y, n, dims, dtype, stream); break;
    case BinaryKind::Mul: launch<BinaryKind::Mul>(a, b, y, n, dims, dtype, stream); break;
    case BinaryKind::Div: launch<BinaryKind::Div>(a, b, y, n, dims, dtype, stream); break;
    case BinaryKind::Max: launch<BinaryKind::Max>(a, b, y, n, dims, dtype, stream); break;
    case BinaryKind::Min: launch<BinaryKind::Min>(a, b, y, n, dims, dtype, stream); break;
  }
  check_launch("binary kernel");
}

}  // namespace dnnx::cuda
