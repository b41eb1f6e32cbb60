// TopK's kernel (indexing_kernels.h), by rank: each element of a line counts the elements that
// come before it in the order (a greater value, or largest = 0 a smaller one; an equal value at
// a lower index), and one whose count (its rank) is below k writes itself to output slot rank.
// The order is total (ties broken by index; NaN ranks above every number, equal to another
// NaN), so the ranks 0..k-1 are each taken by exactly one element: the result is sorted and
// deterministic, the ties as onnxruntime's (lower index first).
//
// One block of kBlock threads takes kBlock elements of one line and walks the line in tiles
// staged in shared memory; it stops early once every thread's rank has reached k (the elements
// that cannot be in the top k). Work per line: size^2 comparisons at worst (k near size), fewer
// for a small k; topk_cuda.cc leaves lines too long for this to the host.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "backends/cuda/indexing/indexing_kernels.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/launch.cuh"
#include "backends/cuda/runtime/numeric_types.cuh"

namespace dnnx::cuda {

namespace {

// The key elements of type T compare as: float for the float types, the integer itself else.
template <class T>
using Key = Acc<T>;

template <class K>
__device__ inline bool is_nan_key(K v) {
  if constexpr (std::is_floating_point_v<K>) {
    return isnan(v);
  } else {
    return false;
  }
}

// Whether a comes before b in value alone (NaN above every number).
template <class K>
__device__ inline bool value_before(K a, K b, bool largest) {
  const bool na = is_nan_key(a), nb = is_nan_key(b);
  if (na || nb) return largest ? na && !nb : nb && !na;
  return largest ? a > b : a < b;
}

template <class K>
__device__ inline bool value_equal(K a, K b) {
  const bool na = is_nan_key(a), nb = is_nan_key(b);
  return na || nb ? na && nb : a == b;
}

template <class T>
__global__ void topk_rank(const T* __restrict__ x, T* __restrict__ values, int64_t* __restrict__ indices,
                          int64_t lines, int64_t size, int64_t inner, int64_t k, bool largest) {
  using K = typename Key<T>::type;
  __shared__ K tile[kBlock];
  const int64_t chunks = (size + kBlock - 1) / kBlock;
  for (int64_t block = blockIdx.x; block < lines * chunks; block += gridDim.x) {  // uniform per block
    const int64_t line = block / chunks, o = line / inner, in = line % inner;
    const T* base = x + o * size * inner + in;
    const int64_t mine = block % chunks * kBlock + threadIdx.x;
    const bool active = mine < size;
    const K v = active ? static_cast<K>(base[mine * inner]) : K{};
    int64_t rank = 0;
    for (int64_t start = 0; start < size; start += kBlock) {
      const int64_t j = start + threadIdx.x;
      if (j < size) tile[threadIdx.x] = static_cast<K>(base[j * inner]);
      __syncthreads();
      if (active && rank < k) {
        const int64_t count = size - start < kBlock ? size - start : kBlock;
        for (int64_t t = 0; t < count; ++t) {
          const K w = tile[t];
          rank += value_before(w, v, largest) || (start + t < mine && value_equal(w, v));
        }
      }
      // A barrier too: the tile is read by every thread before the next one overwrites it.
      if (__syncthreads_and(!active || rank >= k)) break;
    }
    if (active && rank < k) {
      const int64_t at = (o * k + rank) * inner + in;
      values[at] = base[mine * inner];
      if (indices) indices[at] = mine;
    }
  }
}

}  // namespace

void launch_topk(const void* x, void* values, int64_t* indices, DType dtype, int64_t outer, int64_t size,
                 int64_t inner, int64_t k, bool largest, cudaStream_t stream) {
  const int64_t lines = outer * inner;
  if (lines == 0 || k == 0) return;
  const int64_t blocks = lines * ((size + kBlock - 1) / kBlock);
  const unsigned grid = static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
  auto run = [&](auto t) {
    using T = decltype(t);
    topk_rank<T><<<grid, kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(values), indices, lines, size,
                                               inner, k, largest);
  };
  for_numeric_dtype(dtype, "TopK kernel", run);
  check_launch("TopK kernel");
}

}  // namespace dnnx::cuda
