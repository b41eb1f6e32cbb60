// NonZero's kernels: Note [device nonzero] in nonzero_kernels.h.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "backends/cuda/indexing/nonzero_kernels.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/offsets_scan.h"

namespace dnnx::cuda {

namespace {

// The flags of one thread's kNonzeroItems consecutive elements of tile `tile` (0 past the end).
template <class Word>
__device__ void tile_flags(const NonzeroInput& in, int64_t tile, bool (&flag)[kNonzeroItems], int& count) {
  const Word* x = static_cast<const Word*>(in.x);
  const Word mask = static_cast<Word>(in.mask);
  const int64_t first = tile * kNonzeroTile + static_cast<int64_t>(threadIdx.x) * kNonzeroItems;
  count = 0;
#pragma unroll
  for (int k = 0; k < kNonzeroItems; ++k) {
    const int64_t i = first + k;
    flag[k] = i < in.count && (x[i] & mask) != 0;
    count += flag[k];
  }
}

template <class Word>
__global__ void count_tiles(NonzeroInput in, int64_t* tile_offsets) {
  using Reduce = cub::BlockReduce<int, kNonzeroThreads>;
  __shared__ typename Reduce::TempStorage temp;
  bool flag[kNonzeroItems];
  int count = 0;
  tile_flags<Word>(in, blockIdx.x, flag, count);
  const int total = Reduce(temp).Sum(count);
  if (threadIdx.x == 0) tile_offsets[blockIdx.x] = total;
}

// Note [one-tile nonzero]: an X of one tile (kNonzeroTile elements or fewer: SSDlite's 3,234
// scores of a class, ~90 NonZeros a run) writes its offsets [0, total] itself, so that its count
// is one launch, not two (the scan of one count is that count).
template <class Word>
__global__ void count_one_tile(NonzeroInput in, int64_t* tile_offsets) {
  using Reduce = cub::BlockReduce<int, kNonzeroThreads>;
  __shared__ typename Reduce::TempStorage temp;
  bool flag[kNonzeroItems];
  int count = 0;
  tile_flags<Word>(in, 0, flag, count);
  const int total = Reduce(temp).Sum(count);
  if (threadIdx.x == 0) {
    tile_offsets[0] = 0;
    tile_offsets[1] = total;
  }
}

template <class Word>
__global__ void write_tiles(NonzeroInput in, NonzeroDims dims, const int64_t* tile_offsets, int64_t* y) {
  using Scan = cub::BlockScan<int, kNonzeroThreads>;
  __shared__ typename Scan::TempStorage temp;
  bool flag[kNonzeroItems];
  int count = 0;
  tile_flags<Word>(in, blockIdx.x, flag, count);
  int before = 0;
  Scan(temp).ExclusiveSum(count, before);
  const int64_t tiles = gridDim.x;
  const int64_t total = tile_offsets[tiles];
  int64_t column = tile_offsets[blockIdx.x] + before;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kNonzeroTile + static_cast<int64_t>(threadIdx.x) * kNonzeroItems;
  for (int k = 0; k < kNonzeroItems; ++k) {
    if (!flag[k]) continue;
    int64_t flat = first + k;
    for (int d = dims.rank - 1; d >= 0; --d) {  // unravel: the last dim varies fastest
      y[d * total + column] = flat % dims.dim[d];
      flat /= dims.dim[d];
    }
    ++column;
  }
}

}  // namespace

void launch_nonzero_count(const NonzeroInput& in, int64_t* tile_offsets, cudaStream_t stream) {
  const int64_t tiles = nonzero_tiles(in.count);
  if (tiles == 1) {  // Note [one-tile nonzero]
    switch (in.elem_bytes) {
      case 1: count_one_tile<uint8_t><<<1, kNonzeroThreads, 0, stream>>>(in, tile_offsets); break;
      case 2: count_one_tile<uint16_t><<<1, kNonzeroThreads, 0, stream>>>(in, tile_offsets); break;
      case 4: count_one_tile<uint32_t><<<1, kNonzeroThreads, 0, stream>>>(in, tile_offsets); break;
      default: count_one_tile<uint64_t><<<1, kNonzeroThreads, 0, stream>>>(in, tile_offsets); break;
    }
    check_launch("nonzero count (one tile)");
    return;
  }
  if (tiles > 0) {
    const dim3 grid(static_cast<unsigned>(tiles));
    switch (in.elem_bytes) {
      case 1: count_tiles<uint8_t><<<grid, kNonzeroThreads, 0, stream>>>(in, tile_offsets); break;
      case 2: count_tiles<uint16_t><<<grid, kNonzeroThreads, 0, stream>>>(in, tile_offsets); break;
      case 4: count_tiles<uint32_t><<<grid, kNonzeroThreads, 0, stream>>>(in, tile_offsets); break;
      default: count_tiles<uint64_t><<<grid, kNonzeroThreads, 0, stream>>>(in, tile_offsets); break;
    }
    check_launch("nonzero count");
  }
  launch_offsets_scan(tile_offsets, tiles, stream);
}

void launch_nonzero_write(const NonzeroInput& in, const NonzeroDims& dims, const int64_t* tile_offsets, int64_t* y,
                          cudaStream_t stream) {
  const int64_t tiles = nonzero_tiles(in.count);
  if (tiles == 0) return;
  const dim3 grid(static_cast<unsigned>(tiles));
  switch (in.elem_bytes) {
    case 1: write_tiles<uint8_t><<<grid, kNonzeroThreads, 0, stream>>>(in, dims, tile_offsets, y); break;
    case 2: write_tiles<uint16_t><<<grid, kNonzeroThreads, 0, stream>>>(in, dims, tile_offsets, y); break;
    case 4: write_tiles<uint32_t><<<grid, kNonzeroThreads, 0, stream>>>(in, dims, tile_offsets, y); break;
    default: write_tiles<uint64_t><<<grid, kNonzeroThreads, 0, stream>>>(in, dims, tile_offsets, y); break;
  }
  check_launch("nonzero write");
}

}  // namespace dnnx::cuda
