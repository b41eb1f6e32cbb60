// sgemm across the CPU thread pool: C's columns (or rows, when C is taller than wide) in one
// contiguous block per worker. Each element's K-sum is the one sgemm_serial computes, so the
// split does not change results.
#include "backends/cpu/blas.h"

#include <algorithm>
#include <cstdint>

#include "backends/cpu/thread_pool.h"

namespace dnnx {

namespace {

// A worker's block must outweigh waking it (tens of microseconds): about 1M multiply-adds is
// ~50 us on one core. Smaller products (an LSTM step, a conv's per-image GEMM) stay serial.
constexpr int64_t kMinMacsPerWorker = int64_t{1} << 20;

}  // namespace

void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
           const float* b, int ldb, float beta, float* c, int ldc) {
  const int64_t macs = int64_t{m} * n * k;
  // The small products skip the pool's lock: a conv calls this once per image.
  const int workers = macs < 2 * kMinMacsPerWorker
                          ? 1
                          : static_cast<int>(std::min<int64_t>(cpu_threads(), macs / kMinMacsPerWorker));
  if (workers <= 1) {
    sgemm_serial(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  const bool split_columns = n >= m;
  const int extent = split_columns ? n : m;
  const int block = (extent + workers - 1) / workers;
  cpu_thread_pool().parallel_for(workers, [&](int64_t first, int64_t last, int) {
    for (int64_t blk = first; blk < last; ++blk) {
      const int lo = static_cast<int>(blk) * block, len = std::min(extent, lo + block) - lo;
      if (len <= 0) continue;
      if (split_columns) {
        // Columns [lo, lo + len) of op(B) and C: op(B)[:, j] is B[j, :] when B is transposed.
        const float* b_blk = trans_b ? b + int64_t{lo} * ldb : b + lo;
        sgemm_serial(trans_a, trans_b, m, len, k, alpha, a, lda, b_blk, ldb, beta, c + lo, ldc);
      } else {
        // Rows [lo, lo + len) of op(A) and C: op(A)[i, :] is A[:, i] when A is transposed.
        const float* a_blk = trans_a ? a + lo : a + int64_t{lo} * lda;
        sgemm_serial(trans_a, trans_b, len, n, k, alpha, a_blk, lda, b, ldb, beta, c + int64_t{lo} * ldc, ldc);
      }
    }
  });
}

}  // namespace dnnx
