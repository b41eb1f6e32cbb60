// sgemm across the CPU thread pool (Note [cpu threads] in thread_pool.cc).
//
// Note [thread-independent gemm blocks]
// OpenBLAS's result for one element of C depends on where that element sits in the problem it
// was handed: its micro-kernels cover C in register tiles (16x4, 8x4, ... on Haswell), and the
// ragged edge of a smaller problem is summed by a different kernel in a different order. So if
// the split of C followed the thread count, C[i, j] computed with 2 threads would differ from
// 1 thread by an ulp or two (measured on an AVX2 EPYC with scipy-openblas32 0.3.34: LeNet's fc1
// at batch 64, 1.5e-7). The split therefore depends on the problem's shape alone: a large
// product is cut into blocks of C's columns (or rows, when C is taller than wide) whose width is
// a function of (m, n, k), and the pool's threads, however many there are, take those blocks.
// One thread runs the same blocks one after another, so every thread count computes the same
// sgemm_serial calls and the same bits.
#include "backends/cpu/dense/blas.h"

#include <algorithm>
#include <cstdint>

#include "backends/cpu/runtime/thread_pool.h"

namespace dnnx {

namespace {

// A block must outweigh waking a worker (tens of microseconds): about 1M multiply-adds is
// ~50 us on one core. Smaller products (an LSTM step, a conv's per-image GEMM) stay one call.
constexpr int64_t kMinMacsPerBlock = int64_t{1} << 20;
// A one-row product (sgemv) streams B from memory at a few multiply-adds per float loaded, so a
// smaller block outweighs waking a worker: LeNet's fc1 at batch 1 (400k, 1.6 MB of weights).
constexpr int64_t kMinMacsPerRowBlock = int64_t{1} << 17;
// Enough blocks to balance any pool this engine runs with, few enough that repacking op(A) (or
// op(B)) per block stays negligible: a block is at least kMinBlockExtent wide. 64 cost 15% at
// one thread on ViT-Tiny's [197 x 192] x [192 x 768] (12 blocks, op(A) packed 12 times: 0.48 ms
// against 0.41 unsplit, SkylakeX kernels); 192 runs it in 4 blocks at the unsplit call's time.
constexpr int64_t kMaxBlocks = 64;
constexpr int64_t kMinBlockExtent = 192;
// Block edges on a multiple of the widest register tile (16), so that only C's own last block
// has a ragged edge, as in the unsplit call.
constexpr int64_t kBlockAlign = 16;

struct GemmBlocks {
  bool split_columns = true;
  int64_t extent = 0;  // the split dim: n (columns) or m (rows)
  int64_t width = 0;   // every block's extent but the last
  int64_t count = 1;
};

// Depends on (m, n, k) and the caller's max_blocks (a constant of the call site) only, never on
// the thread count (Note [thread-independent gemm blocks]).
GemmBlocks plan_blocks(int m, int n, int k, int64_t max_blocks) {
  GemmBlocks b;
  b.split_columns = n >= m;
  b.extent = b.split_columns ? n : m;
  const int64_t macs = int64_t{m} * n * k;
  const int64_t by_work = macs / (m == 1 ? kMinMacsPerRowBlock : kMinMacsPerBlock);
  const int64_t by_extent = b.extent / kMinBlockExtent;
  const int64_t wanted = std::min({std::min(kMaxBlocks, max_blocks), by_work, by_extent});
  if (wanted < 2) {
    b.width = b.extent;
    return b;
  }
  const int64_t raw = (b.extent + wanted - 1) / wanted;
  b.width = (raw + kBlockAlign - 1) / kBlockAlign * kBlockAlign;
  b.count = (b.extent + b.width - 1) / b.width;
  return b;
}

}  // namespace

void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
           const float* b, int ldb, float beta, float* c, int ldc, int max_blocks) {
  const GemmBlocks blocks = plan_blocks(m, n, k, max_blocks);
  if (blocks.count <= 1) {
    sgemm_serial(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  auto run_block = [&](int64_t blk) {
    const int lo = static_cast<int>(blk * blocks.width);
    const int len = static_cast<int>(std::min(blocks.extent, lo + blocks.width) - lo);
    if (blocks.split_columns) {
      // Columns [lo, lo + len) of op(B) and C: op(B)[:, j] is B[j, :] when B is transposed.
      const float* b_blk = trans_b ? b + int64_t{lo} * ldb : b + lo;
      sgemm_serial(trans_a, trans_b, m, len, k, alpha, a, lda, b_blk, ldb, beta, c + lo, ldc);
    } else {
      // Rows [lo, lo + len) of op(A) and C: op(A)[i, :] is A[:, i] when A is transposed.
      const float* a_blk = trans_a ? a + lo : a + int64_t{lo} * lda;
      sgemm_serial(trans_a, trans_b, len, n, k, alpha, a_blk, lda, b, ldb, beta, c + int64_t{lo} * ldc, ldc);
    }
  };
  // Inside a pool job (a conv's per-image GEMM) or with one thread, parallel_for runs every
  // block on the caller, in order; the blocks are the same either way.
  cpu_thread_pool().parallel_for(blocks.count, [&](int64_t first, int64_t last, int) {
    for (int64_t blk = first; blk < last; ++blk) run_block(blk);
  });
}

}  // namespace dnnx
