// Note [avx512 gemm]
// C [M, N] = alpha * op(A) [M, K] op(B) [K, N] + beta * C with AVX-512F intrinsics, compiled for
// that target alone (callers check sgemm_avx512_applies first: AVX-512F present at run time).
//   - op(B) is cut into panels of 32 columns, all packed per call into contiguous [K, 32] blocks
//     (zero-padded past N), B read once in its own memory order: a model's weights are cold at
//     each layer, and a sequential read streams where a panel-by-panel (strided) walk waited on
//     memory (LeViT's [16 x 384] x [384 x 768] in the model: 0.39 ms reading B in place, 0.235
//     packing panel by panel, 0.21 packing all at once; OpenBLAS 0.235). The micro-kernel then
//     reads two cache lines of its panel per k. Where B is small (<= 256 KB, likely still in L2
//     from the last call: GPT-2's and BERT's layers) and M has at most 4 row blocks, the kernel
//     reads B in place: GPT-2's [32 x 128] x [128 x 512] 0.031 ms, against 0.054 packing first.
//   - the micro-kernel keeps a 12 x 32 tile of C in 24 zmm accumulators: per k, two loads of the
//     panel, twelve broadcasts of A, 24 FMAs (the FMA ports' rate; a 6 x 32 tile ran 10-15%
//     slower); the last rows of M take the same kernel with fewer rows (a template per count).
//   - each element of C is acc = fma(a[i,k], b[k,j], acc) for k = 0..K-1 from 0, then alpha and
//     beta: one order, whatever panel or thread computed it, so the result does not depend on
//     the thread count (Note [thread-independent gemm blocks] in blas.cc asks no more).
// Measured on this Xeon (1 thread, B in cache): ViT-Tiny's [197 x 192] x [192 x 768] 0.41 ms on
// OpenBLAS (SkylakeX kernels; its SapphireRapids and Cooperlake core types no faster), 0.36-0.40
// here, onnxruntime 0.32 (its weights packed once at load: packing per call is the difference;
// a plan-time pack would need repacking when fine-tuning changes B). bench/RESULTS.md has the models.
#include "backends/cpu/dense/gemm_avx512.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "backends/cpu/runtime/thread_pool.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define DNNX_HAVE_AVX512_GEMM 1
#endif

namespace dnnx {

#ifdef DNNX_HAVE_AVX512_GEMM

namespace {

constexpr int kPanel = 32;   // columns of op(B) per panel: two zmm
constexpr int kRows = 12;    // rows of C per micro-kernel call
// op(B) read in place, not packed: up to 4 row blocks over a B of at most 256 KB (Note [avx512 gemm]).
constexpr int kInPlaceRows = 48;
constexpr int64_t kInPlaceFloats = int64_t{1} << 16;
constexpr int kMaxK = 4096;  // a panel of kMaxK x 32 floats: 512 KB, L2's share
// The packed op(B) lives in a per-thread buffer that keeps its largest size: at most 16 MB (a
// language model's vocabulary projection stays OpenBLAS's).
constexpr int64_t kMaxPackedFloats = int64_t{1} << 22;

bool cpu_has_avx512f() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}

// Every panel of op(B), one after another: packed[(pi * K + p) * 32 + j] = op(B)[p, 32 pi + j],
// 0 past N. B is read in its own memory order (rows of B, each once), so the hardware prefetch
// streams it: a model's weights are cold at each layer (ViT's and LeViT's exceed L2).
__attribute__((target("avx512f"))) void pack_all_panels(bool trans_b, const float* b, int ldb, int k, int n,
                                                        float* packed) {
  const int64_t panel_floats = static_cast<int64_t>(k) * kPanel;
  const int panels = (n + kPanel - 1) / kPanel;
  if (!trans_b) {  // B [K, N]: row p scattered into each panel's row p
    for (int p = 0; p < k; ++p) {
      const float* row = b + static_cast<int64_t>(p) * ldb;
      for (int pi = 0; pi < panels; ++pi) {
        const int j0 = pi * kPanel, cols = std::min(kPanel, n - j0);
        float* dst = packed + pi * panel_floats + static_cast<int64_t>(p) * kPanel;
        const int rest = cols - 16;
        const __mmask16 m0 = cols >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << cols) - 1);
        const __mmask16 m1 = rest >= 16 ? __mmask16(0xFFFF) : rest <= 0 ? __mmask16(0) : __mmask16((1u << rest) - 1);
        _mm512_storeu_ps(dst, _mm512_maskz_loadu_ps(m0, row + j0));  // zeros past N
        _mm512_storeu_ps(dst + 16, _mm512_maskz_loadu_ps(m1, row + j0 + 16));
      }
    }
    return;
  }
  // B [N, K]: row j of B is column j of op(B)
  for (int j = 0; j < n; ++j) {
    const float* row = b + static_cast<int64_t>(j) * ldb;
    float* dst = packed + (j / kPanel) * panel_floats + j % kPanel;
    for (int p = 0; p < k; ++p) dst[static_cast<int64_t>(p) * kPanel] = row[p];
  }
  const int tail = n % kPanel;  // the last panel's padding columns
  if (tail) {
    float* last = packed + (panels - 1) * panel_floats;
    for (int p = 0; p < k; ++p) std::fill(last + static_cast<int64_t>(p) * kPanel + tail, last + (p + 1) * int64_t{kPanel}, 0.0f);
  }
}

// acc0/acc1 [r] += a(r, p) * panel row p, p = 0..k-1 (micro_kernel's loop; kFull: 32 columns, no masks)
template <int R, bool kFull>
__attribute__((target("avx512f"), always_inline)) inline void panel_sweep(const float* a, int64_t a_row, int64_t a_k,
                                                                          const float* panel, int64_t ps, int k,
                                                                          __mmask16 m0, __mmask16 m1, __m512* acc0,
                                                                          __m512* acc1) {
  for (int p = 0; p < k; ++p) {
    const float* bp = panel + p * ps;
    const __m512 b0 = kFull ? _mm512_loadu_ps(bp) : _mm512_maskz_loadu_ps(m0, bp);
    const __m512 b1 = kFull ? _mm512_loadu_ps(bp + 16) : _mm512_maskz_loadu_ps(m1, bp + 16);
    const float* ap = a + p * a_k;
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(ap[r * a_row]);
      acc0[r] = _mm512_fmadd_ps(av, b0, acc0[r]);
      acc1[r] = _mm512_fmadd_ps(av, b1, acc1[r]);
    }
  }
}

// C rows [0, R) x panel columns [0, cols): a(i, p) = a[i * a_row + p * a_k], b(p, j) = panel[p * ps + j]
// (ps: 32 for a packed panel, ldb for op(B) read in place; masked loads never touch columns past cols).
template <int R>
__attribute__((target("avx512f"))) void micro_kernel(const float* a, int64_t a_row, int64_t a_k, const float* panel,
                                                     int64_t ps, int k, float* c, int64_t ldc, int cols, float alpha,
                                                     float beta) {
  const __mmask16 m0 = cols >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << cols) - 1);
  const int rest = cols - 16;
  const __mmask16 m1 = rest >= 16  ? static_cast<__mmask16>(0xFFFF)
                       : rest <= 0 ? static_cast<__mmask16>(0)
                                   : static_cast<__mmask16>((1u << rest) - 1);
  __m512 acc0[R], acc1[R];
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) {
    acc0[r] = _mm512_setzero_ps();
    acc1[r] = _mm512_setzero_ps();
  }
  // a whole panel's loop takes plain loads (masked ones kept their masks on the stack: two loads more a k)
  if (cols == kPanel) {
    panel_sweep<R, true>(a, a_row, a_k, panel, ps, k, m0, m1, acc0, acc1);
  } else {
    panel_sweep<R, false>(a, a_row, a_k, panel, ps, k, m0, m1, acc0, acc1);
  }
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) {
    float* cr = c + r * ldc;
    __m512 v0 = alpha == 1.0f ? acc0[r] : _mm512_mul_ps(va, acc0[r]);
    __m512 v1 = alpha == 1.0f ? acc1[r] : _mm512_mul_ps(va, acc1[r]);
    if (beta != 0.0f) {
      v0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, cr), v0);
      v1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, cr + 16), v1);
    }
    _mm512_mask_storeu_ps(cr, m0, v0);
    _mm512_mask_storeu_ps(cr + 16, m1, v1);
  }
}

using MicroKernel = void (*)(const float*, int64_t, int64_t, const float*, int64_t, int, float*, int64_t, int, float,
                             float);
constexpr MicroKernel kKernels[kRows + 1] = {nullptr,          micro_kernel<1>,  micro_kernel<2>, micro_kernel<3>,
                                             micro_kernel<4>,  micro_kernel<5>,  micro_kernel<6>, micro_kernel<7>,
                                             micro_kernel<8>,  micro_kernel<9>,  micro_kernel<10>, micro_kernel<11>,
                                             micro_kernel<12>};

// Note [narrow panels]: a panel of at most 16 columns (N = 16, or the last panel of N = 16 mod 32)
// on micro_kernel's tile paid for two vectors of FMAs per row and k, one of them on zeros: an
// attention's [256 x 256] x [256 x 16] (MobileViT-XXS's A V products, 16 heads x patches) ran at
// 2.1x onnxruntime's time (0.72 against 0.345 ms, 1 thread, this 2-core EPYC). The narrow tile
// keeps one vector of C per row for up to kNarrowRows rows: per k, one load of the panel,
// kNarrowRows broadcasts of A and as many FMAs. Each element is the same FMA chain as on the wide
// tile (k = 0..K-1 from 0, then alpha and beta), so the split still leaves the bits alone.
constexpr int kNarrowRows = 24;

template <int R>
__attribute__((target("avx512f"))) void narrow_kernel(const float* a, int64_t a_row, int64_t a_k, const float* panel,
                                                      int64_t ps, int k, float* c, int64_t ldc, int cols, float alpha,
                                                      float beta) {
  const __mmask16 m0 = cols >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << cols) - 1);
  __m512 acc[R];
#pragma GCC unroll 24
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  for (int p = 0; p < k; ++p) {
    const __m512 b0 = _mm512_maskz_loadu_ps(m0, panel + p * ps);
    const float* ap = a + p * a_k;
#pragma GCC unroll 24
    for (int r = 0; r < R; ++r) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(ap[r * a_row]), b0, acc[r]);
  }
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 24
  for (int r = 0; r < R; ++r) {
    float* cr = c + r * ldc;
    __m512 v0 = alpha == 1.0f ? acc[r] : _mm512_mul_ps(va, acc[r]);
    if (beta != 0.0f) v0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, cr), v0);
    _mm512_mask_storeu_ps(cr, m0, v0);
  }
}

template <int... R>
constexpr std::array<MicroKernel, sizeof...(R) + 1> narrow_kernels(std::integer_sequence<int, R...>) {
  return {nullptr, narrow_kernel<R + 1>...};
}
constexpr auto kNarrowKernels = narrow_kernels(std::make_integer_sequence<int, kNarrowRows>{});

// C's rows [0, m) of one panel of `cols` columns (Note [narrow panels]: 16 or fewer on the narrow tile).
__attribute__((target("avx512f"))) void panel_rows(const float* a, int64_t a_row, int64_t a_k, const float* panel,
                                                   int64_t ps, int m, int k, float* c, int64_t ldc, int cols,
                                                   float alpha, float beta) {
  const bool narrow = cols <= 16;
  const int step = narrow ? kNarrowRows : kRows;
  for (int i = 0; i < m; i += step) {
    const int rows = std::min(step, m - i);
    const MicroKernel kernel = narrow ? kNarrowKernels[rows] : kKernels[rows];
    kernel(a + i * a_row, a_row, a_k, panel, ps, k, c + static_cast<int64_t>(i) * ldc, ldc, cols, alpha, beta);
  }
}

}  // namespace

bool sgemm_avx512_applies(int m, int n, int k) {
  const int64_t packed = (int64_t{n} + kPanel - 1) / kPanel * kPanel * k;
  return m >= 2 && n >= 1 && k >= 1 && k <= kMaxK && packed <= kMaxPackedFloats && cpu_has_avx512f();
}

void sgemm_avx512(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                  const float* b, int ldb, float beta, float* c, int ldc) {
  const int64_t a_row = trans_a ? 1 : lda, a_k = trans_a ? lda : 1;
  const int64_t panels = (n + kPanel - 1) / kPanel;
  if (!trans_b && m <= kInPlaceRows && int64_t{k} * n <= kInPlaceFloats) {  // op(B) read in place
    cpu_thread_pool().parallel_for(panels, [&](int64_t first, int64_t last, int) {
      for (int64_t pi = first; pi < last; ++pi) {
        const int j0 = static_cast<int>(pi * kPanel);
        const int cols = std::min(kPanel, n - j0);
        panel_rows(a, a_row, a_k, b + j0, ldb, m, k, c + j0, ldc, cols, alpha, beta);
      }
    });
    return;
  }
  const int64_t panel_floats = static_cast<int64_t>(k) * kPanel;
  thread_local std::vector<float> packed;  // the calling thread's; the workers read it
  packed.resize(static_cast<size_t>(panels * panel_floats));
  pack_all_panels(trans_b, b, ldb, k, n, packed.data());
  const float* all = packed.data();
  cpu_thread_pool().parallel_for(panels, [&](int64_t first, int64_t last, int) {
    for (int64_t pi = first; pi < last; ++pi) {
      const int j0 = static_cast<int>(pi * kPanel);
      const int cols = std::min(kPanel, n - j0);
      panel_rows(a, a_row, a_k, all + pi * panel_floats, kPanel, m, k, c + j0, ldc, cols, alpha, beta);
    }
  });
}

#else  // no AVX-512 build: never applies

bool sgemm_avx512_applies(int, int, int) { return false; }

void sgemm_avx512(bool, bool, int, int, int, float, const float*, int, const float*, int, float, float*, int) {}

#endif

}  // namespace dnnx
