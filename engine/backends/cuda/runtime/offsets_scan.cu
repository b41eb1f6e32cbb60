// One block walks the counts in chunks of kScanThreads, each chunk scanned by cub's BlockScan and
// offset by the chunks before it: the counts are few (a tile per 4096 elements, a segment per
// batch and class), so one block is enough and needs no second pass.
#include <cub/block/block_scan.cuh>

#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/offsets_scan.h"

namespace dnnx::cuda {

namespace {

// 512, bounded: cub's int64 BlockScan took 80 registers a thread at 1024 threads, over the 64K a
// block may hold (the launch failed with cudaErrorLaunchOutOfResources on an H100).
constexpr int kScanThreads = 512;

__global__ void __launch_bounds__(kScanThreads) scan_offsets(int64_t* counts, int64_t n) {
  using Scan = cub::BlockScan<int64_t, kScanThreads>;
  __shared__ typename Scan::TempStorage temp;
  int64_t carry = 0;
  for (int64_t base = 0; base < n; base += kScanThreads) {
    const int64_t i = base + threadIdx.x;
    const int64_t v = i < n ? counts[i] : 0;
    int64_t before = 0, chunk = 0;
    Scan(temp).ExclusiveSum(v, before, chunk);
    if (i < n) counts[i] = carry + before;
    carry += chunk;
    __syncthreads();  // the temp storage is reused by the next chunk
  }
  if (threadIdx.x == 0) counts[n] = carry;
}

}  // namespace

void launch_offsets_scan(int64_t* counts, int64_t n, cudaStream_t stream) {
  scan_offsets<<<1, kScanThreads, 0, stream>>>(counts, n);
  check_launch("offsets scan");
}

}  // namespace dnnx::cuda
