#include "backends/cpu/quant/int_gemm_cpu.h"

#include <algorithm>
#include <cstring>

#include "backends/cpu/runtime/thread_pool.h"

namespace dnnx {

namespace {

constexpr int64_t kColumnBlock = 512;  // C's row slice kept in L1 (2 KB) while K streams past

void gemm_rows(int64_t first, int64_t last, int64_t n, int64_t k, const int16_t* a, const int16_t* b, int32_t* c) {
  for (int64_t i = first; i < last; ++i) {
    int32_t* crow = c + i * n;
    std::memset(crow, 0, sizeof(int32_t) * static_cast<size_t>(n));
    const int16_t* arow = a + i * k;
    for (int64_t j0 = 0; j0 < n; j0 += kColumnBlock) {
      const int64_t width = std::min(kColumnBlock, n - j0);
      int32_t* cblock = crow + j0;
      for (int64_t p = 0; p < k; ++p) {
        const int32_t av = arow[p];
        if (av == 0) continue;
        const int16_t* brow = b + p * n + j0;
        for (int64_t j = 0; j < width; ++j) cblock[j] += av * static_cast<int32_t>(brow[j]);
      }
    }
  }
}

}  // namespace

void gemm_s16(int64_t m, int64_t n, int64_t k, const int16_t* a, const int16_t* b, int32_t* c, int workers) {
  if (workers <= 1 || m < 2) {
    gemm_rows(0, m, n, k, a, b, c);
    return;
  }
  cpu_thread_pool().parallel_for(
      m, [&](int64_t first, int64_t last, int) { gemm_rows(first, last, n, k, a, b, c); }, workers);
}

}  // namespace dnnx
