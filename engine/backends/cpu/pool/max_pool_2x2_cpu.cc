// Note [max pool 2x2]
// The general MaxPool kernel (pool_cpu.cc) handles any window separably, an output row at a
// time: a copy of the window's first row into a scratch row, the max with the second, then the
// pairs of columns in a scalar loop, with a std::copy (a memmove call) per row. On the short rows
// of the small models that per-row overhead is most of the work: LeNet-5's second pool ([10, 16,
// 10, 10] -> 5x5) took 11.5 us on this project's Xeon (1 thread), onnxruntime's 3 us. Here each
// output row is computed in registers: the two input rows' maxima 32 columns at a time (two
// 16-wide vectors, masked at the row's end), their even and odd columns gathered by one
// permutation each, and the max of those stored. Each max keeps the general kernel's operand
// order (std::max(a, b) is _mm512_max_ps(b, a): a where either is NaN or they compare equal),
// so the results are the same bits. Only 2-D pools (one depth) take this path.
#include "backends/cpu/pool/max_pool_2x2_cpu.h"

#include <algorithm>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DNNX_POOL_AVX512 1
#endif

namespace dnnx {

namespace {

enum Dim { kD = 0, kH = 1, kW = 2 };

#ifdef DNNX_POOL_AVX512
__attribute__((target("avx512f"))) inline __mmask16 first_lanes(int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << std::max<int64_t>(n, 0)) - 1u);
}

// _mm512_max_ps(a, b) in its masked form: GCC 12 warns of the unmasked one's undefined source.
__attribute__((target("avx512f"))) inline __m512 max16(__m512 a, __m512 b) {
  return _mm512_mask_max_ps(a, static_cast<__mmask16>(0xFFFF), a, b);
}

__attribute__((target("avx512f"))) void plane_avx512(const float* x, int64_t w, int64_t oh, int64_t ow, float* y) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  for (int64_t r = 0; r < oh; ++r) {
    const float* a = x + 2 * r * w;
    const float* b = a + w;
    float* out = y + r * ow;
    for (int64_t j = 0; j < ow; j += 16) {
      const int64_t outputs = std::min<int64_t>(16, ow - j), inputs = 2 * outputs;
      const __mmask16 lo = first_lanes(inputs), hi = first_lanes(inputs - 16);
      const float* a0 = a + 2 * j;
      const float* b0 = b + 2 * j;
      // std::max(row a, row b) per column
      const __m512 m0 = max16(_mm512_maskz_loadu_ps(lo, b0), _mm512_maskz_loadu_ps(lo, a0));
      const __m512 m1 = max16(_mm512_maskz_loadu_ps(hi, b0 + 16), _mm512_maskz_loadu_ps(hi, a0 + 16));
      // std::max(column 2j, column 2j + 1)
      const __m512 left = _mm512_permutex2var_ps(m0, even, m1), right = _mm512_permutex2var_ps(m0, odd, m1);
      _mm512_mask_storeu_ps(out + j, first_lanes(outputs), max16(right, left));
    }
  }
}

bool has_avx512() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}
#endif

}  // namespace

bool max_pool_2x2_applies(const ConvGeometry& g3) {
#ifdef DNNX_POOL_AVX512
  if (!has_avx512()) return false;
  if (g3.kernel[kD] != 1 || g3.kernel[kH] != 2 || g3.kernel[kW] != 2) return false;
  if (g3.strides[kH] != 2 || g3.strides[kW] != 2 || g3.dilations[kH] != 1 || g3.dilations[kW] != 1) return false;
  for (size_t d = 0; d < 3; ++d) {
    if (g3.pads_begin[d] != 0 || g3.pads_end[d] != 0) return false;
  }
  return g3.input[kD] == 1 && g3.output[kD] == 1 && 2 * g3.output[kH] <= g3.input[kH] &&
         2 * g3.output[kW] <= g3.input[kW];
#else
  (void)g3;
  return false;
#endif
}

void max_pool_2x2_plane(const float* x, int64_t w, int64_t oh, int64_t ow, float* y) {
#ifdef DNNX_POOL_AVX512
  plane_avx512(x, w, oh, ow, y);
#else
  (void)x, (void)w, (void)oh, (void)ow, (void)y;
#endif
}

}  // namespace dnnx
