// TopK's kernel (indexing_kernels.h), by rank: each element of a line counts the elements that
// come before it in the order (a greater value, or largest = 0 a smaller one; an equal value at
// a lower index), and one whose count (its rank) is below k writes itself to output slot rank.
// The order is total (ties broken by index; NaN ranks above every number, equal to another
// NaN), so the ranks 0..k-1 are each taken by exactly one element: the result is sorted and
// deterministic, the ties as onnxruntime's (lower index first).
//
// One block of kBlock threads takes kBlock elements of one line and walks the line in tiles
// staged in shared memory; it stops early once every thread's rank has reached k (the elements
// that cannot be in the top k). A line longer than one block's tile is ranked a warp per element
// (Note [topk by warp]). Work per line: size^2 comparisons at worst (k near size), fewer
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

// Whether a comes before b in value alone (NaN above every number).
template <class K>
__device__ inline bool value_before(K a, K b, bool largest) {
  const bool na = is_nan_value(a), nb = is_nan_value(b);
  if (na || nb) return largest ? na && !nb : nb && !na;
  return largest ? a > b : a < b;
}

template <class K>
__device__ inline bool value_equal(K a, K b) {
  const bool na = is_nan_value(a), nb = is_nan_value(b);
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

// Note [topk by warp]: a line longer than one tile ranks each element with a warp: lane l compares
// the elements l, l + 32, ... and the warp sums the counts, every kWarpRankUnroll * 32 elements
// too, to stop once the rank has reached k. The block kernel above gave a line of n elements
// only n / kBlock blocks, each thread walking the whole line: SSDlite's 90 TopKs of ~3,200
// scores took 196 us each on an H100 in 13 blocks; here the same work spreads over n / 8 blocks.
constexpr int kWarpRankUnroll = 8;

__device__ inline int warp_sum(int v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

template <class T>
__global__ void topk_rank_by_warp(const T* __restrict__ x, T* __restrict__ values, int64_t* __restrict__ indices,
                                  int64_t lines, int64_t size, int64_t inner, int64_t k, bool largest) {
  using K = typename Key<T>::type;
  const int lane = threadIdx.x % 32;
  const int64_t warps_per_block = blockDim.x / 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * warps_per_block;
  for (int64_t w = blockIdx.x * warps_per_block + threadIdx.x / 32; w < lines * size; w += warps) {  // uniform per warp
    const int64_t line = w / size, mine = w % size, o = line / inner, in = line % inner;
    const T* base = x + o * size * inner + in;
    const K v = static_cast<K>(base[mine * inner]);
    int rank = 0;  // this lane's count; the warp's is their sum
    int total = 0;
    for (int64_t start = 0; start < size; start += 32 * kWarpRankUnroll) {
      for (int u = 0; u < kWarpRankUnroll; ++u) {
        const int64_t j = start + u * 32 + lane;
        if (j < size) {
          const K other = static_cast<K>(base[j * inner]);
          rank += value_before(other, v, largest) || (j < mine && value_equal(other, v));
        }
      }
      total = warp_sum(rank);
      if (total >= k) break;
    }
    if (lane == 0 && total < k) {
      const int64_t at = (o * k + total) * inner + in;
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
  const bool by_warp = size > kBlock;  // Note [topk by warp]
  const int64_t blocks = by_warp ? (lines * size + kBlock / 32 - 1) / (kBlock / 32) : lines * ((size + kBlock - 1) / kBlock);
  const unsigned grid = static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
  auto run = [&](auto t) {
    using T = decltype(t);
    if (by_warp) {
      topk_rank_by_warp<T><<<grid, kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(values), indices,
                                                         lines, size, inner, k, largest);
      return;
    }
    topk_rank<T><<<grid, kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(values), indices, lines, size,
                                               inner, k, largest);
  };
  for_numeric_dtype(dtype, "TopK kernel", run);
  check_launch("TopK kernel");
}

}  // namespace dnnx::cuda
