// Note [recurrent dot product]
// At batch 1 an LSTM or GRU step is a matrix-vector product, H_prev [1, H] · R^T, one per step
// and direction, and it is the whole of the work that cannot be batched over time. Measured on
// the zoo's bidirectional LSTM classifier (batch 1, 50 steps, hidden 128; 2026-12-05, this
// project's 2-core CI machine), the kernel before this one spent its time in:
// - OpenBLAS's sgemm per step (layer 2: W too large for a TapGemm), which forwards m = 1 to its
//   sgemv, with the call's overhead on every one of the 100 steps;
// - a TapGemm over R^T (layer 1): with one row, each tile holds 3 accumulators, so the FMAs wait
//   on each other's latency (3 in flight where the core runs 8);
// - the transposition of R into R^T, 64K floats with a strided store, on every call.
// Here out = a · b^T reads R as ONNX lays it out ([G*H, H], each row contiguous): every output is
// the dot product of two contiguous rows, summed in 8 lanes over k (the last partial vector
// loaded under a mask, zeros past k) and then across the lanes by one fixed tree,
// ((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7)). A block of 8 accumulators is in flight: 8 rows of R
// against one batch row (m odd: the last row), or 4 rows against 2 batch rows; the 8 sums are
// reduced together (hadd, hadd, halves), each in that tree. So each output's bits depend on k
// only, not on the block, the batch, or the thread: a split of batch rows or directions across
// threads gives the same results. Nothing is packed or allocated: a fine-tuning step's update
// of R is read by the next call as it is. (Tried: R^T packed per call into column panels of 64,
// streamed with 8 vector sums per row: the step was no faster, 3.5 against 3.3 us for
// [1, 128] x [128, 512], and the pack cost 20 us per direction.)
#include "backends/cpu/rnn/recurrent_product_cpu.h"
#include "backends/cpu/runtime/cpu_features.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DNNX_RECURRENT_AVX2 1
#endif

namespace dnnx {

namespace {

constexpr int kLanes = 8;

// The portable loop: the same lane sums and tree, without FMA (so not the same bits as the
// vector code; the same bits for any split of the work).
float dot_portable(const float* a, const float* b, int64_t k) {
  float lane[kLanes] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t kk = 0;
  for (; kk + kLanes <= k; kk += kLanes) {
    for (int l = 0; l < kLanes; ++l) lane[l] += a[kk + l] * b[kk + l];
  }
  for (int l = 0; kk + l < k; ++l) lane[l] += a[kk + l] * b[kk + l];
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

void product_portable(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, float* out,
                      int64_t ldo) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) out[i * ldo + j] = dot_portable(a + i * lda, b + j * k, k);
  }
}

// Without AVX2: tiles small enough that the strided stores stay in cache.
void transpose_portable(int64_t rows, int64_t cols, const float* from, float* to) {
  constexpr int64_t kTile = 16;
  for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
    const int64_t r1 = std::min(rows, r0 + kTile);
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t c1 = std::min(cols, c0 + kTile);
      for (int64_t c = c0; c < c1; ++c) {
        for (int64_t r = r0; r < r1; ++r) to[c * rows + r] = from[r * cols + c];
      }
    }
  }
}

#ifdef DNNX_RECURRENT_AVX2
#define DNNX_AVX2 __attribute__((target("avx2,fma")))

// The 8 x 8 tiles of rows [0, rows - rows % 8) and columns [0, cols - cols % 8).
DNNX_AVX2 void transpose_avx2(int64_t rows, int64_t cols, const float* from, float* to) {
  for (int64_t r0 = 0; r0 + kLanes <= rows; r0 += kLanes) {
    for (int64_t c0 = 0; c0 + kLanes <= cols; c0 += kLanes) {
      const float* src = from + r0 * cols + c0;
      const __m256 r0v = _mm256_loadu_ps(src), r1v = _mm256_loadu_ps(src + cols),
                   r2v = _mm256_loadu_ps(src + 2 * cols), r3v = _mm256_loadu_ps(src + 3 * cols),
                   r4v = _mm256_loadu_ps(src + 4 * cols), r5v = _mm256_loadu_ps(src + 5 * cols),
                   r6v = _mm256_loadu_ps(src + 6 * cols), r7v = _mm256_loadu_ps(src + 7 * cols);
      const __m256 t0 = _mm256_unpacklo_ps(r0v, r1v), t1 = _mm256_unpackhi_ps(r0v, r1v);
      const __m256 t2 = _mm256_unpacklo_ps(r2v, r3v), t3 = _mm256_unpackhi_ps(r2v, r3v);
      const __m256 t4 = _mm256_unpacklo_ps(r4v, r5v), t5 = _mm256_unpackhi_ps(r4v, r5v);
      const __m256 t6 = _mm256_unpacklo_ps(r6v, r7v), t7 = _mm256_unpackhi_ps(r6v, r7v);
      const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
      const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
      const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
      const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
      float* dst = to + c0 * rows + r0;
      _mm256_storeu_ps(dst, _mm256_permute2f128_ps(u0, u4, 0x20));
      _mm256_storeu_ps(dst + rows, _mm256_permute2f128_ps(u1, u5, 0x20));
      _mm256_storeu_ps(dst + 2 * rows, _mm256_permute2f128_ps(u2, u6, 0x20));
      _mm256_storeu_ps(dst + 3 * rows, _mm256_permute2f128_ps(u3, u7, 0x20));
      _mm256_storeu_ps(dst + 4 * rows, _mm256_permute2f128_ps(u0, u4, 0x31));
      _mm256_storeu_ps(dst + 5 * rows, _mm256_permute2f128_ps(u1, u5, 0x31));
      _mm256_storeu_ps(dst + 6 * rows, _mm256_permute2f128_ps(u2, u6, 0x31));
      _mm256_storeu_ps(dst + 7 * rows, _mm256_permute2f128_ps(u3, u7, 0x31));
    }
  }
}

// The mask of the first `lanes` lanes (0-8).
DNNX_AVX2 inline __m256i tail_mask(int64_t lanes) {
  alignas(32) static const int32_t ones[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ones + kLanes - lanes));
}

// Lane j of the result = the sum of s_j's 8 lanes, in the tree of Note [recurrent dot product].
DNNX_AVX2 inline __m256 reduce8(__m256 s0, __m256 s1, __m256 s2, __m256 s3, __m256 s4, __m256 s5, __m256 s6,
                                __m256 s7) {
  // hadd(x, y) = [x0+x1, x2+x3, y0+y1, y2+y3 | x4+x5, x6+x7, y4+y5, y6+y7]
  const __m256 t0 = _mm256_hadd_ps(_mm256_hadd_ps(s0, s1), _mm256_hadd_ps(s2, s3));
  const __m256 t1 = _mm256_hadd_ps(_mm256_hadd_ps(s4, s5), _mm256_hadd_ps(s6, s7));
  // t0 = [s0 (l0..l3), s1, s2, s3 | s0 (l4..l7), s1, s2, s3]; t1 the same for s4..s7.
  return _mm256_add_ps(_mm256_permute2f128_ps(t0, t1, 0x20), _mm256_permute2f128_ps(t0, t1, 0x31));
}

// Lanes j = a · b_j for 8 rows b_j (k floats each).
DNNX_AVX2 __m256 block_8x1(const float* a, const float* const* b, int64_t k, __m256i tail) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
  int64_t kk = 0;
  for (; kk + kLanes <= k; kk += kLanes) {
    const __m256 x = _mm256_loadu_ps(a + kk);
    s0 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b[0] + kk), s0);
    s1 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b[1] + kk), s1);
    s2 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b[2] + kk), s2);
    s3 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b[3] + kk), s3);
    s4 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b[4] + kk), s4);
    s5 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b[5] + kk), s5);
    s6 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b[6] + kk), s6);
    s7 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b[7] + kk), s7);
  }
  if (kk < k) {
    const __m256 x = _mm256_maskload_ps(a + kk, tail);
    s0 = _mm256_fmadd_ps(x, _mm256_maskload_ps(b[0] + kk, tail), s0);
    s1 = _mm256_fmadd_ps(x, _mm256_maskload_ps(b[1] + kk, tail), s1);
    s2 = _mm256_fmadd_ps(x, _mm256_maskload_ps(b[2] + kk, tail), s2);
    s3 = _mm256_fmadd_ps(x, _mm256_maskload_ps(b[3] + kk, tail), s3);
    s4 = _mm256_fmadd_ps(x, _mm256_maskload_ps(b[4] + kk, tail), s4);
    s5 = _mm256_fmadd_ps(x, _mm256_maskload_ps(b[5] + kk, tail), s5);
    s6 = _mm256_fmadd_ps(x, _mm256_maskload_ps(b[6] + kk, tail), s6);
    s7 = _mm256_fmadd_ps(x, _mm256_maskload_ps(b[7] + kk, tail), s7);
  }
  return reduce8(s0, s1, s2, s3, s4, s5, s6, s7);
}

// Lanes 0-3 = a0 · b_j, lanes 4-7 = a1 · b_j for 4 rows b_j.
DNNX_AVX2 __m256 block_4x2(const float* a0, const float* a1, const float* const* b, int64_t k, __m256i tail) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
  int64_t kk = 0;
  for (; kk + kLanes <= k; kk += kLanes) {
    const __m256 x0 = _mm256_loadu_ps(a0 + kk);
    const __m256 x1 = _mm256_loadu_ps(a1 + kk);
    __m256 w = _mm256_loadu_ps(b[0] + kk);
    s0 = _mm256_fmadd_ps(x0, w, s0);
    s4 = _mm256_fmadd_ps(x1, w, s4);
    w = _mm256_loadu_ps(b[1] + kk);
    s1 = _mm256_fmadd_ps(x0, w, s1);
    s5 = _mm256_fmadd_ps(x1, w, s5);
    w = _mm256_loadu_ps(b[2] + kk);
    s2 = _mm256_fmadd_ps(x0, w, s2);
    s6 = _mm256_fmadd_ps(x1, w, s6);
    w = _mm256_loadu_ps(b[3] + kk);
    s3 = _mm256_fmadd_ps(x0, w, s3);
    s7 = _mm256_fmadd_ps(x1, w, s7);
  }
  if (kk < k) {
    const __m256 x0 = _mm256_maskload_ps(a0 + kk, tail);
    const __m256 x1 = _mm256_maskload_ps(a1 + kk, tail);
    __m256 w = _mm256_maskload_ps(b[0] + kk, tail);
    s0 = _mm256_fmadd_ps(x0, w, s0);
    s4 = _mm256_fmadd_ps(x1, w, s4);
    w = _mm256_maskload_ps(b[1] + kk, tail);
    s1 = _mm256_fmadd_ps(x0, w, s1);
    s5 = _mm256_fmadd_ps(x1, w, s5);
    w = _mm256_maskload_ps(b[2] + kk, tail);
    s2 = _mm256_fmadd_ps(x0, w, s2);
    s6 = _mm256_fmadd_ps(x1, w, s6);
    w = _mm256_maskload_ps(b[3] + kk, tail);
    s3 = _mm256_fmadd_ps(x0, w, s3);
    s7 = _mm256_fmadd_ps(x1, w, s7);
  }
  return reduce8(s0, s1, s2, s3, s4, s5, s6, s7);
}

// Stores the first `count` lanes of v at out.
DNNX_AVX2 inline void store_lanes(float* out, __m256 v, int64_t count) {
  if (count == kLanes) {
    _mm256_storeu_ps(out, v);
    return;
  }
  alignas(32) float lanes[kLanes];
  _mm256_store_ps(lanes, v);
  std::memcpy(out, lanes, static_cast<size_t>(count) * sizeof(float));
}

DNNX_AVX2 void product_avx2(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                            float* out, int64_t ldo) {
  const __m256i tail = tail_mask(k % kLanes);
  // Groups of 8 rows of b; the rows past n of the last group repeat its last row (not stored).
  for (int64_t j0 = 0; j0 < n; j0 += kLanes) {
    const int64_t cols = std::min<int64_t>(kLanes, n - j0);
    const float* rows[kLanes];
    for (int64_t j = 0; j < kLanes; ++j) rows[j] = b + std::min(j0 + j, n - 1) * k;
    int64_t i = 0;
    for (; i + 2 <= m; i += 2) {
      const float* a0 = a + i * lda;
      const float* a1 = a0 + lda;
      float* o0 = out + i * ldo + j0;
      float* o1 = o0 + ldo;
      for (int64_t half = 0; half < cols; half += 4) {
        const __m256 v = block_4x2(a0, a1, rows + half, k, tail);
        const int64_t count = std::min<int64_t>(4, cols - half);
        alignas(32) float lanes[kLanes];
        _mm256_store_ps(lanes, v);
        std::memcpy(o0 + half, lanes, static_cast<size_t>(count) * sizeof(float));
        std::memcpy(o1 + half, lanes + 4, static_cast<size_t>(count) * sizeof(float));
      }
    }
    if (i < m) store_lanes(out + i * ldo + j0, block_8x1(a + i * lda, rows, k, tail), cols);
  }
}

#endif

}  // namespace

void recurrent_transpose(int64_t rows, int64_t cols, const float* from, float* to) {
#ifdef DNNX_RECURRENT_AVX2
  if (recurrent_vectorized()) {
    transpose_avx2(rows, cols, from, to);
    // The edges: the last rows % 8 rows, and the last cols % 8 columns of the other rows.
    const int64_t full_rows = rows - rows % kLanes, full_cols = cols - cols % kLanes;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = r < full_rows ? full_cols : 0; c < cols; ++c) to[c * rows + r] = from[r * cols + c];
    }
    return;
  }
#endif
  transpose_portable(rows, cols, from, to);
}

bool recurrent_vectorized() {
#ifdef DNNX_RECURRENT_AVX2
  static const bool vectorized = [] {
    const char* forced = std::getenv("DNNX_RNN_PORTABLE");
    const bool portable = forced && *forced && std::strcmp(forced, "0") != 0;
    return !portable && cpu_has_avx2_fma();
  }();
  return vectorized;
#else
  return false;
#endif
}

void recurrent_product(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, float* out,
                       int64_t ldo) {
  if (m <= 0 || n <= 0) return;
#ifdef DNNX_RECURRENT_AVX2
  if (recurrent_vectorized()) {
    product_avx2(m, n, k, a, lda, b, out, ldo);
    return;
  }
#endif
  product_portable(m, n, k, a, lda, b, out, ldo);
}

}  // namespace dnnx
