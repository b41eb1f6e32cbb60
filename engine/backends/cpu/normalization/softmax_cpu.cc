// Softmax and LogSoftmax on the CPU, numerically stable: the maximum along the normalised axis
// is subtracted before exp, so no exp overflows. The input is viewed as [outer, n, inner]
// (softmax_geometry); with inner == 1 every row is contiguous ("rows"), otherwise the axis is
// strided and a workspace of 2*inner floats holds the running max and sum of one [n, inner]
// block, so the loops still walk memory contiguously ("strided axis").
#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/kernel_registry.h"
#include "backends/cpu/elementwise/fixed_chunks.h"
#include "backends/cpu/elementwise/vector_math.h"
#include "backends/cpu/runtime/fast_math.h"
#include "ops/normalization/softmax.h"
#include "backends/cpu/runtime/cpu_features.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DNNX_SOFTMAX_AVX512 1
#endif

namespace dnnx {

namespace {

enum class SoftmaxKind { Softmax, LogSoftmax };

// Note [softmax lanes]: a row's max and sum are kept in kLanes partial results (lane l takes the
// elements j = l mod kLanes of the full blocks, the tail goes to lane 0 in order), then combined
// pairwise; the loops over a block are then plain vector code (a serial float sum cannot be
// reordered by the compiler, so it ran one element at a time: ViT-Tiny's 12 Softmax layers over
// [3, 197, 197] took 4.6 ms). The order depends on n alone, never on the thread count. The max
// skips NaN as std::max_element did (a NaN element still makes the row's sum, and so the row, NaN).
constexpr int64_t kLanes = 16;

// kLanes floats as one GCC vector value: the block loops below compile to vector max/add in every
// clone (written as 16-element array loops, the max loop stayed scalar).
typedef float Lanes __attribute__((vector_size(kLanes * sizeof(float))));

inline float lanes_max(const float* x, int64_t n) {
  Lanes m = {};
  m += x[0];  // every lane x[0]
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    Lanes v;
    std::memcpy(&v, x + j, sizeof v);
    m = v > m ? v : m;
  }
  float out[kLanes];
  std::memcpy(out, &m, sizeof out);
  for (; j < n; ++j) out[0] = x[j] > out[0] ? x[j] : out[0];
  for (int64_t w = kLanes / 2; w > 0; w /= 2) {
    for (int64_t l = 0; l < w; ++l) out[l] = out[l + w] > out[l] ? out[l + w] : out[l];
  }
  return out[0];
}

inline float lanes_sum(const float (&acc)[kLanes]) {
  float s[kLanes];
  for (int64_t l = 0; l < kLanes; ++l) s[l] = acc[l];
  for (int64_t w = kLanes / 2; w > 0; w /= 2) {
    for (int64_t l = 0; l < w; ++l) s[l] += s[l + w];
  }
  return s[0];
}

// The row's sum in lanes (Note [softmax lanes]).
inline float lanes_total(const float* y, int64_t n) {
  Lanes a = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    Lanes v;
    std::memcpy(&v, y + j, sizeof v);
    a += v;
  }
  float acc[kLanes];
  std::memcpy(acc, &a, sizeof acc);
  for (; j < n; ++j) acc[0] += y[j];
  return lanes_sum(acc);
}

// Note [softmax's tiny probabilities]: onnxruntime's Softmax (MLAS's sum-exp kernels) keeps the
// subnormal values of e^(x - max) on a CPU with AVX-512F, and on one without (its FMA3 kernel)
// writes 0 wherever (x - max) * log2(e) rounds below -126, that is x - max < -126.5 ln 2
// (onnxruntime 1.32 on an AVX2-only EPYC, 4096 steps over [-87.8, -87.55]: -87.68309 kept as
// 9.0e-39, -87.68315 zeroed; its Exp keeps the subnormals on both). A detector's `score > 0`
// counts them: torchvision's Faster R-CNN (zoo2, box score threshold 0) kept a fifth box of score
// 1.0e-43 there where onnxruntime kept four. So Softmax flushes as onnxruntime does on the CPU it
// runs on: below kFma3Floor where the CPU lacks AVX-512F, never where it has it (the AVX-512
// path below and the short rows' clone keep them, as onnxruntime's AVX-512F kernel does).
constexpr float kFma3Floor = -87.68312f;  // -126.5 ln 2

float softmax_floor() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const float floor = __builtin_cpu_supports("avx512f") ? -INFINITY : kFma3Floor;
  return floor;
#else
  return -INFINITY;
#endif
}

// e^d for d = x - max <= 0, as onnxruntime's Softmax gives it on this CPU (above).
inline float softmax_expf(float d, float floor) { return d < floor ? 0.0f : fast_expf(d); }

// y = e^(x - max) / sum, over one contiguous row of n >= 1: the exps in one plain loop (the
// compiler vectorizes it; fused with the lane sums it did not), then the sum over y in L1.
DNNX_VECTOR_CLONES_AVX512 void softmax_row(const float* x, float* y, int64_t n, float floor) {
  const float max = lanes_max(x, n);
  for (int64_t j = 0; j < n; ++j) y[j] = softmax_expf(x[j] - max, floor);
  const float scale = 1.0f / lanes_total(y, n);
  for (int64_t j = 0; j < n; ++j) y[j] *= scale;
}

#if DNNX_SOFTMAX_AVX512
// Note [softmax exp with scalef]: softmax_row in AVX-512, for rows of one vector or more with no
// NaN and a finite max (else softmax_row). There x - max <= 0, so fast_expf's upper clamp goes;
// the polynomial is fast_expf's, and 2^n is applied by vscalefps, one correctly rounded step
// (fast_expf builds 2^(n-1) from the exponent bits and multiplies twice, and reaches the
// subnormals as e^(x + 40) * e^-40: there, and only there, a result may differ in its last bit,
// each closer to e^x). The exps are summed as they are stored, in lanes_total's lanes and order
// (Note [softmax lanes]). The compiler's fast_expf kept its clamps and subnormal path as
// compare-and-blend sequences: a row's exp pass went from ~20 to ~12 cycles a vector. Measured
// on this 2-core EPYC, one thread, 1024 rows of 256 (a C++ loop over the row functions): 0.173
// -> 0.089 ms, onnxruntime's whole Softmax run 0.122 ms. The max and, for a row of whole
// vectors, the sum are reduced in registers: a max is exact in any order, and the sum's halves
// pair the lanes as lanes_sum does (the same bits over a million random vectors); rows of 64
// had spent ~40% of their time in the scalar reductions.
__attribute__((target("avx512f"), always_inline)) inline __m512 softmax_exp_avx512(__m512 d) {
  d = _mm512_max_ps(d, _mm512_set1_ps(-104.0f));  // e^-104 rounds to 0, as any smaller d's does
  const __m512 round = _mm512_set1_ps(12582912.0f);  // 1.5 * 2^23: round to nearest
  const __m512 n = _mm512_sub_ps(_mm512_fmadd_ps(d, _mm512_set1_ps(1.44269504088896341f), round), round);
  const __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(2.12194440e-4f), _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), d));
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(1.9875691500e-4f), r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  const __m512 er = _mm512_add_ps(_mm512_fmadd_ps(_mm512_mul_ps(p, r), r, r), _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(er, n);
}

// false: the row is left to softmax_row (shorter than a vector, a NaN, or an infinite max).
__attribute__((target("avx512f"))) bool softmax_row_avx512(const float* x, float* y, int64_t n) {
  if (n < kLanes) return false;
  __m512 m = _mm512_set1_ps(x[0]);
  __mmask16 nan = 0;
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    const __m512 v = _mm512_loadu_ps(x + j);
    nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    m = _mm512_mask_mov_ps(m, _mm512_cmp_ps_mask(v, m, _CMP_GT_OQ), v);  // lanes_max's v > m ? v : m
  }
  if (nan) return false;
  // The row's max: exact in any order (no NaN here), so the vector reduction gives lanes_max's.
  float max = _mm512_reduce_max_ps(m);
  for (; j < n; ++j) {
    if (std::isnan(x[j])) return false;
    max = x[j] > max ? x[j] : max;
  }
  if (!std::isfinite(max)) return false;  // x - max would be NaN somewhere
  const __m512 vmax = _mm512_set1_ps(max);
  __m512 sum = _mm512_setzero_ps();
  for (j = 0; j + kLanes <= n; j += kLanes) {
    const __m512 e = softmax_exp_avx512(_mm512_sub_ps(_mm512_loadu_ps(x + j), vmax));
    _mm512_storeu_ps(y + j, e);
    sum = _mm512_add_ps(sum, e);
  }
  float total;
  if (j == n) {
    // lanes_sum's pairs, (l, l + 8), (l, l + 4), (l, l + 2), (0, 1), are the reduction's halves
    total = _mm512_reduce_add_ps(sum);
  } else {
    float acc[kLanes];
    _mm512_storeu_ps(acc, sum);
    for (; j < n; ++j) {
      y[j] = fast_expf(x[j] - max);
      acc[0] += y[j];
    }
    total = lanes_sum(acc);
  }
  const float scale = 1.0f / total;
  const __m512 vscale = _mm512_set1_ps(scale);
  for (j = 0; j + kLanes <= n; j += kLanes) _mm512_storeu_ps(y + j, _mm512_mul_ps(_mm512_loadu_ps(y + j), vscale));
  for (; j < n; ++j) y[j] *= scale;
  return true;
}

bool softmax_avx512_usable() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}
#endif

#if DNNX_SOFTMAX_AVX512
// Note [softmax in avx2]: softmax_row for a CPU with AVX2 and FMA but no AVX-512, in the AVX-512
// row's form (Note [softmax exp with scalef]): the max and NaN test in vectors, then each exp
// stored and summed in 16 lanes (two vectors of 8: Note [softmax lanes]), then the scale. The
// compiler's AVX2 clone of softmax_row kept fast_expf's clamps, subnormal path and the floor's
// select, and took 3.3x onnxruntime's time (MobileViT-xxs's [16, 256, 256] rows: 4.79 against
// 1.45 ms, 1 thread, this 2-core EPYC). Here x - max lies in [kFma3Floor, 0] wherever a lane is
// kept (those below the floor are 0, as onnxruntime's FMA3 kernel writes them: Note [softmax's
// tiny probabilities]), so n = round((x - max) log2 e) is in [-126, 0] and 2^n a normal float
// made from its exponent bits; er * 2^n is one rounding, as vscalefps's.
__attribute__((target("avx2,fma"), always_inline)) inline __m256 softmax_exp_avx2(__m256 d) {
  const __m256 kept = _mm256_cmp_ps(d, _mm256_set1_ps(kFma3Floor), _CMP_GE_OQ);
  d = _mm256_max_ps(d, _mm256_set1_ps(kFma3Floor));
  const __m256 round = _mm256_set1_ps(12582912.0f);  // 1.5 * 2^23: round to nearest
  const __m256 n = _mm256_sub_ps(_mm256_fmadd_ps(d, _mm256_set1_ps(1.44269504088896341f), round), round);
  const __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(2.12194440e-4f), _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), d));
  __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(1.9875691500e-4f), r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  const __m256 er = _mm256_add_ps(_mm256_fmadd_ps(_mm256_mul_ps(p, r), r, r), _mm256_set1_ps(1.0f));
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_and_ps(_mm256_mul_ps(er, _mm256_castsi256_ps(bits)), kept);
}

// false: the row is left to softmax_row (shorter than 16, a NaN, or an infinite max).
__attribute__((target("avx2,fma"))) bool softmax_row_avx2(const float* x, float* y, int64_t n) {
  if (n < kLanes) return false;
  __m256 m0 = _mm256_set1_ps(x[0]), m1 = m0, nan = _mm256_setzero_ps();
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    const __m256 v0 = _mm256_loadu_ps(x + j), v1 = _mm256_loadu_ps(x + j + 8);
    nan = _mm256_or_ps(nan, _mm256_or_ps(_mm256_cmp_ps(v0, v0, _CMP_UNORD_Q), _mm256_cmp_ps(v1, v1, _CMP_UNORD_Q)));
    m0 = _mm256_blendv_ps(m0, v0, _mm256_cmp_ps(v0, m0, _CMP_GT_OQ));  // lanes_max's v > m ? v : m
    m1 = _mm256_blendv_ps(m1, v1, _mm256_cmp_ps(v1, m1, _CMP_GT_OQ));
  }
  if (_mm256_movemask_ps(nan)) return false;
  // The row's max: exact in any order (no NaN here), so any reduction gives lanes_max's.
  float lanes[kLanes];
  _mm256_storeu_ps(lanes, _mm256_max_ps(m0, m1));
  float max = lanes[0];
  for (int l = 1; l < 8; ++l) max = lanes[l] > max ? lanes[l] : max;
  for (; j < n; ++j) {
    if (std::isnan(x[j])) return false;
    max = x[j] > max ? x[j] : max;
  }
  if (!std::isfinite(max)) return false;  // x - max would be NaN somewhere
  const __m256 vmax = _mm256_set1_ps(max);
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  for (j = 0; j + kLanes <= n; j += kLanes) {
    const __m256 e0 = softmax_exp_avx2(_mm256_sub_ps(_mm256_loadu_ps(x + j), vmax));
    const __m256 e1 = softmax_exp_avx2(_mm256_sub_ps(_mm256_loadu_ps(x + j + 8), vmax));
    _mm256_storeu_ps(y + j, e0);
    _mm256_storeu_ps(y + j + 8, e1);
    s0 = _mm256_add_ps(s0, e0);
    s1 = _mm256_add_ps(s1, e1);
  }
  _mm256_storeu_ps(lanes, s0);
  _mm256_storeu_ps(lanes + 8, s1);
  for (; j < n; ++j) {
    y[j] = softmax_expf(x[j] - max, kFma3Floor);
    lanes[0] += y[j];
  }
  const float scale = 1.0f / lanes_sum(lanes);
  const __m256 vscale = _mm256_set1_ps(scale);
  for (j = 0; j + 8 <= n; j += 8) _mm256_storeu_ps(y + j, _mm256_mul_ps(_mm256_loadu_ps(y + j), vscale));
  for (; j < n; ++j) y[j] *= scale;
  return true;
}

bool softmax_avx2_usable() {
  return cpu_avx2_without_avx512();
}
#endif

// y = (x - max) - log(sum e^(x - max)): (x - max) first, exact for close large logits, where
// max + log(sum) would round.
DNNX_VECTOR_CLONES_AVX512 void log_softmax_row(const float* x, float* y, int64_t n) {
  const float max = lanes_max(x, n);
  float acc[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) acc[l] += fast_expf(x[j + l] - max);
  }
  for (; j < n; ++j) acc[0] += fast_expf(x[j] - max);
  const float log_sum = std::log(lanes_sum(acc));
  for (j = 0; j < n; ++j) y[j] = (x[j] - max) - log_sum;
}

class SoftmaxKernel final : public Kernel {
 public:
  // floor_: LogSoftmax keeps every exp in its sum (its outputs are logs, never the exps themselves)
  SoftmaxKernel(SoftmaxKind kind, SoftmaxGeometry g)
      : kind_(kind), g_(g), floor_(kind == SoftmaxKind::Softmax ? softmax_floor() : -INFINITY) {}

  void run(const KernelArgs& args) const override {
    const float* x = args.in(0);
    float* y = args.out(0);
    const int64_t block = g_.n * g_.inner;
    if (g_.inner == 1) {  // rows across the pool (Note [fixed chunks]: each row is one call either way)
      for_fixed_chunks(g_.outer, rows_per_chunk(g_.n), [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) row(x + o * block, y + o * block);
      });
      return;
    }
    for (int64_t o = 0; o < g_.outer; ++o) strided(x + o * block, y + o * block, static_cast<float*>(args.workspace));
  }

 private:
  // x, y: [n], contiguous (Note [softmax lanes]).
  void row(const float* x, float* y) const {
    if (g_.n == 0) return;
    if (kind_ == SoftmaxKind::Softmax) {
#if DNNX_SOFTMAX_AVX512
      if (softmax_avx512_usable() && softmax_row_avx512(x, y, g_.n)) return;  // Note [softmax exp with scalef]
      if (softmax_avx2_usable() && softmax_row_avx2(x, y, g_.n)) return;      // Note [softmax in avx2]
#endif
      softmax_row(x, y, g_.n, floor_);
    } else {
      log_softmax_row(x, y, g_.n);
    }
  }

  // x, y: [n, inner]; normalised over n for each of the inner columns. ws: 2*inner floats.
  void strided(const float* x, float* y, float* ws) const {
    const int64_t n = g_.n, inner = g_.inner;
    if (n == 0) return;
    float* max = ws;
    float* sum = ws + inner;
    std::copy(x, x + inner, max);
    for (int64_t j = 1; j < n; ++j) {
      const float* xj = x + j * inner;
      for (int64_t i = 0; i < inner; ++i) max[i] = std::max(max[i], xj[i]);
    }
    std::fill(sum, sum + inner, 0.0f);
    for (int64_t j = 0; j < n; ++j) {
      const float* xj = x + j * inner;
      float* yj = y + j * inner;
      for (int64_t i = 0; i < inner; ++i) {
        yj[i] = softmax_expf(xj[i] - max[i], floor_);
        sum[i] += yj[i];
      }
    }
    if (kind_ == SoftmaxKind::Softmax) {
      for (int64_t i = 0; i < inner; ++i) sum[i] = 1.0f / sum[i];
      for (int64_t j = 0; j < n; ++j) {
        float* yj = y + j * inner;
        for (int64_t i = 0; i < inner; ++i) yj[i] *= sum[i];
      }
    } else {
      for (int64_t i = 0; i < inner; ++i) sum[i] = std::log(sum[i]);
      for (int64_t j = 0; j < n; ++j) {
        const float* xj = x + j * inner;
        float* yj = y + j * inner;
        for (int64_t i = 0; i < inner; ++i) yj[i] = (xj[i] - max[i]) - sum[i];
      }
    }
  }

  SoftmaxKind kind_;
  SoftmaxGeometry g_;
  float floor_;  // e^(x - max) below it is 0 (Note [softmax's tiny probabilities])
};

KernelFactory softmax_factory(SoftmaxKind kind) {
  return [kind](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
    const SoftmaxGeometry g = softmax_geometry(node, inputs[0].info.shape);
    KernelChoice choice;
    choice.kernel = std::make_unique<SoftmaxKernel>(kind, g);
    if (g.inner == 1) {
      choice.algorithm = "rows";
    } else {
      choice.algorithm = "strided axis";
      choice.workspace_bytes = static_cast<size_t>(2 * g.inner) * sizeof(float);
    }
    return choice;
  };
}

}  // namespace

void register_cpu_softmax_kernels(KernelRegistry& r) {
  r.add("Softmax", softmax_factory(SoftmaxKind::Softmax));
  r.add("LogSoftmax", softmax_factory(SoftmaxKind::LogSoftmax));
}

}  // namespace dnnx
