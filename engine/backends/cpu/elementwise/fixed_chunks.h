// Splitting a row-wise or elementwise kernel across the CPU pool in chunks whose bounds depend on
// the problem's size alone (Note [fixed chunks]).
#pragma once
#include <algorithm>
#include <cstdint>

#include "backends/cpu/runtime/thread_pool.h"

namespace dnnx {

// Note [fixed chunks]: fn(begin, end) over [0, n) in chunks of `chunk` items (the last shorter);
// the pool's threads take whole chunks, so every item is computed by the same call shape (the
// same vector body or scalar tail of a loop) whatever the thread count, and the results are the
// same bits at 1 or 2 threads. A chunk is sized to outweigh waking a worker (~16K floats of a
// transcendental loop, ~15 us); a problem of one chunk runs on the caller.
template <class Fn>
void for_fixed_chunks(int64_t n, int64_t chunk, Fn&& fn) {
  const int64_t chunks = chunk > 0 ? (n + chunk - 1) / chunk : 0;
  if (chunks <= 1) {
    if (n > 0) fn(int64_t{0}, n);
    return;
  }
  cpu_thread_pool().parallel_for(chunks, [&](int64_t first, int64_t last, int) {
    for (int64_t c = first; c < last; ++c) fn(c * chunk, std::min(n, (c + 1) * chunk));
  });
}

// Floats per chunk of a transcendental elementwise loop (Tanh, Erf, Gelu).
constexpr int64_t kTranscendentalChunk = 16384;

// Rows per chunk of a row kernel over rows of `row_len` floats: about kTranscendentalChunk floats.
inline int64_t rows_per_chunk(int64_t row_len) {
  return std::max<int64_t>(1, kTranscendentalChunk / std::max<int64_t>(1, row_len));
}

}  // namespace dnnx
