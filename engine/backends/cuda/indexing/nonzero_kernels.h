// NonZero's device kernels (nonzero_kernels.cu), launched by nonzero_cuda.cc's staged kernel
// (Note [device staged kernels] in runtime/staged_kernel.h).
//
// Note [device nonzero]: a two-pass count scan over tiles of kNonzeroTile elements, written here
// rather than with cub::DeviceSelect:
//   count  one block per tile counts its nonzero elements (tile_offsets[t]); one block scans
//          those counts in place (runtime/offsets_scan.h: the total in tile_offsets[tiles]); the host reads
//          the total back (8 bytes, the one copy) and the engine allocates [rank, total];
//   write  one block per tile reads its elements again, scans their flags within the tile and
//          writes each nonzero element's coordinates to column tile_offsets[t] + its rank.
// So the output is in row-major order of X by construction (onnxruntime's and numpy's order),
// and the workspace is one int64 per tile (an eighth of a byte per element) where a select would
// keep every selected flat index (8 bytes per element) to unravel afterwards; X is read twice,
// which costs less than writing and reading those indices. The block-wide scans are cub's
// BlockReduce and BlockScan (header-only, with the toolkit).
// An element is zero when its bits under the type's magnitude mask are 0 (nonzero_mask: -0.0 is
// zero in every float type, NaN is not; the fnuz float8 types' 0x80 is NaN; integers and bool:
// any bit), as ops/indexing/nonzero_compress.cc's element_nonzero decides on the host.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

namespace dnnx::cuda {

constexpr int kNonzeroThreads = 256;
constexpr int kNonzeroItems = 16;  // per thread, consecutive (a blocked arrangement)
constexpr int64_t kNonzeroTile = kNonzeroThreads * kNonzeroItems;
constexpr int kMaxNonzeroDims = 16;

// X read as `elem_bytes`-byte words (1, 2, 4 or 8), nonzero where (word & mask) != 0.
struct NonzeroInput {
  const void* x = nullptr;
  int64_t count = 0;  // elements
  int elem_bytes = 4;
  uint64_t mask = ~uint64_t{0};
};

// X's dims for the unravel (a scalar as [1]).
struct NonzeroDims {
  int rank = 1;
  int64_t dim[kMaxNonzeroDims] = {};
};

inline int64_t nonzero_tiles(int64_t count) { return (count + kNonzeroTile - 1) / kNonzeroTile; }

// tile_offsets [tiles + 1] int64: the exclusive offsets of each tile's nonzeros, the total last.
void launch_nonzero_count(const NonzeroInput& in, int64_t* tile_offsets, cudaStream_t stream);
// y [rank, total] int64 (total = tile_offsets[tiles], read on the device): the coordinates.
void launch_nonzero_write(const NonzeroInput& in, const NonzeroDims& dims, const int64_t* tile_offsets, int64_t* y,
                          cudaStream_t stream);

}  // namespace dnnx::cuda
