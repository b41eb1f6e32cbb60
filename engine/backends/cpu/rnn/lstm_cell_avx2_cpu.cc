// Note [lstm cell in avx2]
// The gate math took 57% of the example LSTM's time (batch 64, 16 steps, hidden 32: 224 of
// 394 us on 1 thread on this project's 2-core CI machine) in lstm_cpu.cc's loop, which GCC
// vectorises from scalar code (target_clones): five exponentials and divisions per cell. The
// same arithmetic written with AVX2 intrinsics took 122 us (a reciprocal estimate and a Newton
// step instead of the division measured no faster). e^x is fast_expf (fast_math.h) step for
// step: clamp, n = round(x / ln2), r = x - n*ln2 in two parts, the degree-6 polynomial, 2^n from
// the exponent bits. A row's last cells (fewer than 8: hidden 28 leaves 4) go through the same
// vectors with masked loads and stores: in scalar code their five libm exponentials took as long
// as the 24 vector cells before them (the MNIST rows LSTM, hidden 28, batch 128, 28 steps: its
// LSTM layer 1.40 -> 0.97 ms on 1 thread, this project's Xeon).
#include "backends/cpu/rnn/lstm_cell_avx2_cpu.h"

#include <cstdlib>

#include "backends/cpu/elementwise/activation_cpu.h"
#include "backends/cpu/rnn/recurrent_product_cpu.h"
#include "backends/cpu/runtime/cpu_features.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DNNX_LSTM_AVX2 1
#endif

namespace dnnx {

namespace {

inline float tanh_scalar(float x) { return 2.0f * sigmoidf(2.0f * x) - 1.0f; }

// The tail of a row narrower than 8, in the portable loop's scalar arithmetic.
void cell_scalar(int64_t n, int64_t from, const float* xg, const float* hg, float* c, float* h) {
  for (int64_t j = from; j < n; ++j) {
    const float i = sigmoidf(xg[j] + hg[j]);
    const float f = sigmoidf(xg[2 * n + j] + hg[2 * n + j]);
    const float g = tanh_scalar(xg[3 * n + j] + hg[3 * n + j]);
    const float c_new = f * c[j] + i * g;
    const float o = sigmoidf(xg[n + j] + hg[n + j]);
    c[j] = c_new;
    h[j] = o * tanh_scalar(c_new);
  }
}

#ifdef DNNX_LSTM_AVX2
#define DNNX_AVX2 __attribute__((target("avx2,fma")))

DNNX_AVX2 inline __m256 exp8(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-86.6f)), _mm256_set1_ps(88.72283f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fmadd_ps(n, _mm256_set1_ps(2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  const __m256 er = _mm256_add_ps(_mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r), _mm256_set1_ps(1.0f));
  // 2^n as 2^(n-1) * 2: n reaches 128, past the largest exponent.
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(126)), 23);
  return _mm256_mul_ps(_mm256_mul_ps(er, _mm256_castsi256_ps(bits)), _mm256_set1_ps(2.0f));
}

DNNX_AVX2 inline __m256 sigmoid8(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(one, _mm256_add_ps(one, exp8(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

DNNX_AVX2 inline __m256 tanh8(__m256 x) {
  const __m256 two = _mm256_set1_ps(2.0f);
  return _mm256_sub_ps(_mm256_mul_ps(two, sigmoid8(_mm256_mul_ps(two, x))), _mm256_set1_ps(1.0f));
}

DNNX_AVX2 inline __m256 gate8(const float* xg, const float* hg) {
  return _mm256_add_ps(_mm256_loadu_ps(xg), _mm256_loadu_ps(hg));
}

// The last lanes of a row (Note [lstm cell in avx2]): masked loads read zeros past the row.
DNNX_AVX2 inline __m256 gate8_masked(const float* xg, const float* hg, __m256i mask) {
  return _mm256_add_ps(_mm256_maskload_ps(xg, mask), _mm256_maskload_ps(hg, mask));
}

// One vector of cells from its gates' pre-activations (i, o, f, g) and the old state c.
struct Cell8 {
  __m256 c, h;
};
DNNX_AVX2 inline Cell8 cell8(__m256 i_pre, __m256 o_pre, __m256 f_pre, __m256 g_pre, __m256 c_old) {
  const __m256 c_new = _mm256_fmadd_ps(sigmoid8(f_pre), c_old, _mm256_mul_ps(sigmoid8(i_pre), tanh8(g_pre)));
  return {c_new, _mm256_mul_ps(sigmoid8(o_pre), tanh8(c_new))};
}

DNNX_AVX2 int64_t cell_vectors(int64_t n, const float* xg, const float* hg, float* c, float* h) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const Cell8 cell = cell8(gate8(xg + j, hg + j), gate8(xg + n + j, hg + n + j), gate8(xg + 2 * n + j, hg + 2 * n + j),
                             gate8(xg + 3 * n + j, hg + 3 * n + j), _mm256_loadu_ps(c + j));
    _mm256_storeu_ps(c + j, cell.c);
    _mm256_storeu_ps(h + j, cell.h);
  }
  if (j < n) {  // the tail (hidden 28: 4 of every 28 cells) in the same vector arithmetic, masked
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n - j)),
                                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const Cell8 cell = cell8(gate8_masked(xg + j, hg + j, mask), gate8_masked(xg + n + j, hg + n + j, mask),
                             gate8_masked(xg + 2 * n + j, hg + 2 * n + j, mask),
                             gate8_masked(xg + 3 * n + j, hg + 3 * n + j, mask), _mm256_maskload_ps(c + j, mask));
    _mm256_maskstore_ps(c + j, mask, cell.c);
    _mm256_maskstore_ps(h + j, mask, cell.h);
    j = n;
  }
  return j;
}

// Note [lstm cell in avx512]
// Where AVX-512 runs, the cells go 16 at a time, the tail masked: the 8-wide code's operations
// lane for lane (the same rounding, polynomial and division), so the same bits with half the
// instructions. The gate math was 15% of perf's samples on zoo/lstm_bi.onnx at batch 16, one
// thread, this project's Zen 4 EPYC (the two GEMMs, at the core's FMA rate, most of the rest).
// Each engine beside onnxruntime in one process, two processes per form (10 interleaved rounds
// of 5 calls, medians; a noisy hour on this machine): lstm_bi at batch 16, 1 thread 1.21-1.27 ->
// 1.21 of onnxruntime's time, 2 threads 1.17-1.26 -> 1.15-1.21; zoo2's conv-LSTM 1.17 -> 1.09-1.10
// and 1.20-1.22 -> 1.18-1.21. DNNX_PROBE_CELL8=1 (read once) keeps the 8-wide cells.
#define DNNX_AVX512 __attribute__((target("avx512f")))
// All lanes: the masked forms of min, max, round and convert (GCC warns of the unmasked ones'
// undefined source register).
constexpr __mmask16 kAll = 0xFFFF;

DNNX_AVX512 inline __m512 exp16(__m512 x) {
  x = _mm512_maskz_min_ps(kAll, _mm512_maskz_max_ps(kAll, x, _mm512_set1_ps(-86.6f)), _mm512_set1_ps(88.72283f));
  const __m512 n = _mm512_maskz_roundscale_ps(kAll, _mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                              _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fmadd_ps(n, _mm512_set1_ps(2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  const __m512 er = _mm512_add_ps(_mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r), _mm512_set1_ps(1.0f));
  const __m512i biased = _mm512_add_epi32(_mm512_maskz_cvtps_epi32(kAll, n), _mm512_set1_epi32(126));
  const __m512i bits = _mm512_maskz_slli_epi32(kAll, biased, 23);
  return _mm512_mul_ps(_mm512_mul_ps(er, _mm512_castsi512_ps(bits)), _mm512_set1_ps(2.0f));
}

DNNX_AVX512 inline __m512 sigmoid16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  return _mm512_div_ps(one, _mm512_add_ps(one, exp16(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

DNNX_AVX512 inline __m512 tanh16(__m512 x) {
  const __m512 two = _mm512_set1_ps(2.0f);
  return _mm512_sub_ps(_mm512_mul_ps(two, sigmoid16(_mm512_mul_ps(two, x))), _mm512_set1_ps(1.0f));
}

DNNX_AVX512 inline __m512 gate16(const float* xg, const float* hg, __mmask16 m) {
  return _mm512_add_ps(_mm512_maskz_loadu_ps(m, xg), _mm512_maskz_loadu_ps(m, hg));
}

// Cells [j, j + 16) of the row, those of mask m only.
DNNX_AVX512 inline void cell16(int64_t n, int64_t j, const float* xg, const float* hg, float* c, float* h,
                               __mmask16 m) {
  const __m512 i_pre = gate16(xg + j, hg + j, m), o_pre = gate16(xg + n + j, hg + n + j, m);
  const __m512 f_pre = gate16(xg + 2 * n + j, hg + 2 * n + j, m);
  const __m512 g_pre = gate16(xg + 3 * n + j, hg + 3 * n + j, m);
  const __m512 c_new = _mm512_fmadd_ps(sigmoid16(f_pre), _mm512_maskz_loadu_ps(m, c + j),
                                       _mm512_mul_ps(sigmoid16(i_pre), tanh16(g_pre)));
  _mm512_mask_storeu_ps(c + j, m, c_new);
  _mm512_mask_storeu_ps(h + j, m, _mm512_mul_ps(sigmoid16(o_pre), tanh16(c_new)));
}

DNNX_AVX512 int64_t cell_vectors_avx512(int64_t n, const float* xg, const float* hg, float* c, float* h) {
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) cell16(n, j, xg, hg, c, h, kAll);
  if (j < n) cell16(n, j, xg, hg, c, h, static_cast<__mmask16>((1u << (n - j)) - 1u));
  return n;
}
#endif

}  // namespace

bool lstm_cell_avx2_available() {
#ifdef DNNX_LSTM_AVX2
  return recurrent_vectorized();  // AVX2 and FMA, unless DNNX_RNN_PORTABLE forces the portable loop
#else
  return false;
#endif
}

void lstm_cell_avx2(int64_t hidden, const float* xg, const float* hg, float* c, float* h) {
  int64_t done = 0;
#ifdef DNNX_LSTM_AVX2
  static const bool wide = cpu_has_avx512f() && !std::getenv("DNNX_PROBE_CELL8");
  done = wide ? cell_vectors_avx512(hidden, xg, hg, c, h) : cell_vectors(hidden, xg, hg, c, h);
#endif
  cell_scalar(hidden, done, xg, hg, c, h);
}

}  // namespace dnnx
