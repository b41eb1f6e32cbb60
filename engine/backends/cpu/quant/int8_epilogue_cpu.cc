// Note: the arithmetic is qdq_int8_cpu.cc's file comment; the forms here agree bit for bit
// (tests/test_qdq_int8.py runs the residual and plain layers against onnxruntime).

// No FMA contraction here (the header's rule: onnxruntime rounds the product and the sum apart):
// GCC fused _mm512_mul_ps + _mm512_add_ps into vfmadd under the AVX-512 targets (FMA comes with
// them), so the AVX-512 forms could differ from the AVX2 ones at a rounding tie. Set before the
// includes: the lanes' inline functions (int8_epilogue_lanes.h) are compiled under it too.
#pragma GCC optimize("fp-contract=off")

#include "backends/cpu/quant/int8_epilogue_cpu.h"

#include "backends/cpu/quant/int8_epilogue_lanes.h"
#include "backends/cpu/quant/int8_gemm_cpu.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

namespace dnnx::int8_epilogue {



void requantize_portable(const int32_t* acc, int64_t n, const RowParams& p, const QuantRange& q, int32_t* out) {
  const float lo = static_cast<float>(q.lo - q.zp), hi = static_cast<float>(q.hi - q.zp);
  for (int64_t j = 0; j < n; ++j) {
    const float v = static_cast<float>(acc[j] + p.ibias) * p.mult + p.add;
    out[j] = static_cast<int32_t>(std::nearbyint(std::min(std::max(v, lo), hi))) + q.zp;
  }
}

__attribute__((target("avx2"))) void requantize_avx2(const int32_t* acc, int64_t n, const RowParams& p,
                                                    const QuantRange& q, int32_t* out) {
  const __m256 lo = _mm256_set1_ps(static_cast<float>(q.lo - q.zp)), hi = _mm256_set1_ps(static_cast<float>(q.hi - q.zp));
  const __m256 mult = _mm256_set1_ps(p.mult), add = _mm256_set1_ps(p.add);
  const __m256i bias = _mm256_set1_epi32(p.ibias), zp = _mm256_set1_epi32(q.zp);
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256i a = _mm256_add_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + j)), bias);
    __m256 v = _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(a), mult), add);  // no FMA: onnxruntime rounds twice
    v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + j), _mm256_add_epi32(_mm256_cvtps_epi32(v), zp));
  }
  requantize_portable(acc + j, n - j, p, q, out + j);
}

// The same, 16 lanes, narrowed in the register to Y's bytes (the values are in Y's range already).
__attribute__((target("avx512f,avx512bw"))) void requantize_bytes_avx512(const int32_t* acc, int64_t n, const RowParams& p,
                                                                const QuantRange& q, uint8_t* out) {
  const __m512 lo = _mm512_set1_ps(static_cast<float>(q.lo - q.zp)), hi = _mm512_set1_ps(static_cast<float>(q.hi - q.zp));
  const __m512 mult = _mm512_set1_ps(p.mult), add = _mm512_set1_ps(p.add);
  const __m512i bias = _mm512_set1_epi32(p.ibias), zp = _mm512_set1_epi32(q.zp);
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const __m512i a = _mm512_add_epi32(_mm512_loadu_si512(acc + j), bias);
    __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(a), mult), add);  // no FMA: onnxruntime rounds twice
    v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j), _mm512_cvtepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(v), zp)));
  }
  if (j < n) {  // the tail: the same steps on masked lanes
    const __mmask16 m = static_cast<__mmask16>((1u << (n - j)) - 1);
    const __m512i a = _mm512_add_epi32(_mm512_maskz_loadu_epi32(m, acc + j), bias);
    __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(a), mult), add);
    v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
    _mm512_mask_cvtepi32_storeu_epi8(out + j, m, _mm512_add_epi32(_mm512_cvtps_epi32(v), zp));
  }
}

void requantize(const int32_t* acc, int64_t n, const RowParams& p, const QuantRange& q, int32_t* out) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) requantize_avx2(acc, n, p, q, out);
  else requantize_portable(acc, n, p, q, out);
}

QuantRange range_of(DType t, int32_t zp, bool relu) {
  const int32_t lo = t == DType::Int8 ? -128 : 0, hi = t == DType::Int8 ? 127 : 255;
  return QuantRange{zp, relu ? std::max(lo, zp) : lo, hi};
}


// q[j] = saturate(round((r_scale (q[j] - r_zp) + z_scale (z[j] - z_zp)) / y_scale + y_zp)), as
// QLinearAdd (qlinear_binary_cpu.cc: the zero point added before the rounding).
void add_residual_portable(int32_t* q, const int32_t* z, int64_t n, const ResidualParams& p, const QuantRange& out) {
  for (int64_t j = 0; j < n; ++j) {
    const float v = p.r_ratio() * static_cast<float>(q[j] - p.r_zp) + p.z_ratio() * static_cast<float>(z[j] - p.z_zp);
    const float r = std::min(std::max(v + static_cast<float>(out.zp), static_cast<float>(out.lo)), static_cast<float>(out.hi));
    q[j] = static_cast<int32_t>(std::nearbyint(r));
  }
}

__attribute__((target("avx2"))) void add_residual_avx2(int32_t* q, const int32_t* z, int64_t n, const ResidualParams& p,
                                                      const QuantRange& out) {
  const __m256 sr = _mm256_set1_ps(p.r_ratio()), sz = _mm256_set1_ps(p.z_ratio());
  const __m256i rzp = _mm256_set1_epi32(p.r_zp), zzp = _mm256_set1_epi32(p.z_zp);
  const __m256 zp = _mm256_set1_ps(static_cast<float>(out.zp)), lo = _mm256_set1_ps(static_cast<float>(out.lo)),
               hi = _mm256_set1_ps(static_cast<float>(out.hi));
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256i a = _mm256_sub_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + j)), rzp);
    const __m256i b = _mm256_sub_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(z + j)), zzp);
    const __m256 v = _mm256_add_ps(_mm256_mul_ps(sr, _mm256_cvtepi32_ps(a)), _mm256_mul_ps(sz, _mm256_cvtepi32_ps(b)));
    const __m256 r = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(v, zp), lo), hi);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + j), _mm256_cvtps_epi32(r));
  }
  add_residual_portable(q + j, z + j, n - j, p, out);
}

void add_residual(int32_t* q, const int32_t* z, int64_t n, const ResidualParams& p, const QuantRange& out) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) add_residual_avx2(q, z, n, p, out);
  else add_residual_portable(q, z, n, p, out);
}

// Note [epilogue stores]: the AVX-512 forms narrow 16 int32 results to bytes with vpmovdb into a
// register and store those 16 bytes plainly; only a row's last, partial 16 use the masked
// vpmovdb-to-memory form. On AMD Zen 4 that masked store form cost more than the arithmetic: the
// residual epilogue of a 256 x 3136 layer took 0.27 ms with it on every 16 outputs, 0.18 without
// (a vpermt2b of two results into one 32-byte store: 0.21). The residual's intermediate r is
// rounded in float (ResidualLanes, int8_epilogue_lanes.h) instead of converted to int32 and back.
// Constants are set once per tile, not once per row.
namespace {

__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline void residual_row_avx512(const ResidualLanes& lanes,
                                                                              const int32_t* acc, int64_t n,
                                                                              const RowParams& p, const uint8_t* z,
                                                                              uint8_t* out) {
  const __m512 mult = _mm512_set1_ps(p.mult), add = _mm512_set1_ps(p.add);
  const __m512i bias = _mm512_set1_epi32(p.ibias);
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const __m512i a = _mm512_add_epi32(_mm512_loadu_si512(acc + j), bias);
    const __m128i zraw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(z + j));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j), _mm512_cvtepi32_epi8(lanes.apply(a, zraw, mult, add)));
  }
  if (j < n) {  // the tail: masked lanes
    const __mmask16 m = static_cast<__mmask16>((1u << (n - j)) - 1);
    const __m512i a = _mm512_add_epi32(_mm512_maskz_loadu_epi32(m, acc + j), bias);
    _mm512_mask_cvtepi32_storeu_epi8(out + j, m, lanes.apply(a, _mm_maskz_loadu_epi8(m, z + j), mult, add));
  }
}

}  // namespace

__attribute__((target("avx512f,avx512bw,avx512vl"))) void residual_bytes_avx512(const int32_t* acc, int64_t n, const RowParams& p,
                                                              const QuantRange& rq, const void* z, bool z_signed,
                                                              const ResidualParams& rp, const QuantRange& yq,
                                                              uint8_t* out) {
  residual_row_avx512(ResidualLanes(rq, z_signed, rp, yq), acc, n, p, static_cast<const uint8_t*>(z), out);
}

void dequantize_portable(const int32_t* acc, int64_t n, const RowParams& p, bool relu, float* out, int64_t stride) {
  for (int64_t j = 0; j < n; ++j) {
    const int32_t a = static_cast<int32_t>(static_cast<uint32_t>(acc[j]) + static_cast<uint32_t>(p.ibias));  // wraps as the vectors do
    const float v = static_cast<float>(a) * p.mult + p.add;
    out[j * stride] = relu && !(v > 0.0f) ? 0.0f : v;  // +0 as vmaxps(v, 0) gives
  }
}

__attribute__((target("avx2"))) void dequantize_avx2(const int32_t* acc, int64_t n, const RowParams& p, bool relu,
                                                    float* out) {
  const __m256 mult = _mm256_set1_ps(p.mult), add = _mm256_set1_ps(p.add), floor = _mm256_set1_ps(relu ? 0.0f : -INFINITY);
  const __m256i bias = _mm256_set1_epi32(p.ibias);
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256i a = _mm256_add_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + j)), bias);
    const __m256 v = _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(a), mult), add);
    _mm256_storeu_ps(out + j, _mm256_max_ps(v, floor));
  }
  dequantize_portable(acc + j, n - j, p, relu, out + j, 1);
}

__attribute__((target("avx512f"))) void dequantize_avx512(const int32_t* acc, int64_t n, const RowParams& p, bool relu,
                                                         float* out) {
  const __m512 mult = _mm512_set1_ps(p.mult), add = _mm512_set1_ps(p.add), floor = _mm512_set1_ps(relu ? 0.0f : -INFINITY);
  const __m512i bias = _mm512_set1_epi32(p.ibias);
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const __m512i a = _mm512_add_epi32(_mm512_loadu_si512(acc + j), bias);
    const __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(a), mult), add);
    _mm512_storeu_ps(out + j, _mm512_max_ps(v, floor));
  }
  dequantize_portable(acc + j, n - j, p, relu, out + j, 1);
}

void dequantize(const int32_t* acc, int64_t n, const RowParams& p, bool relu, float* out, int64_t stride) {
  // the GEMM's path (DNNX_INT8_AVX2=1 etc.) picks the form too, so the path tests cover each
  static const Int8Path path = default_int8_path();
  static const bool avx512 = int8_avx512(path), avx2 = path != Int8Path::Portable;
  if (stride != 1) dequantize_portable(acc, n, p, relu, out, stride);
  else if (avx512) dequantize_avx512(acc, n, p, relu, out);
  else if (avx2) dequantize_avx2(acc, n, p, relu, out);
  else dequantize_portable(acc, n, p, relu, out, 1);
}

bool has_byte_epilogues() {
  static const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                             __builtin_cpu_supports("avx512vl");
  return avx512;
}

void requantize_bytes(const int32_t* acc, int64_t n, const RowParams& p, const QuantRange& q, uint8_t* out) {
  requantize_bytes_avx512(acc, n, p, q, out);
}

void residual_bytes(const int32_t* acc, int64_t n, const RowParams& p, const QuantRange& rq, const void* z,
                    bool z_signed, const ResidualParams& rp, const QuantRange& yq, uint8_t* out) {
  residual_bytes_avx512(acc, n, p, rq, z, z_signed, rp, yq, out);
}

// A whole tile, rows [0, rows) x cols: row r's sums at acc + r * ld, its parameters p[r], its
// bytes at out + r * out_ld (and z's at z + r * out_ld): one call per GEMM tile (the per-row calls
// cost as much as the arithmetic on a short K's tiles).
__attribute__((target("avx512f,avx512bw,avx512vl"))) void requantize_tile_bytes_avx512(
    const int32_t* acc, int64_t ld, int64_t rows, int64_t cols, const RowParams* p, const QuantRange& q, uint8_t* out,
    int64_t out_ld) {
  const __m512 lo = _mm512_set1_ps(static_cast<float>(q.lo - q.zp)), hi = _mm512_set1_ps(static_cast<float>(q.hi - q.zp));
  const __m512i zp = _mm512_set1_epi32(q.zp);
  for (int64_t r = 0; r < rows; ++r) {
    const __m512 mult = _mm512_set1_ps(p[r].mult), add = _mm512_set1_ps(p[r].add);
    const __m512i bias = _mm512_set1_epi32(p[r].ibias);
    const int32_t* a_row = acc + r * ld;
    uint8_t* o_row = out + r * out_ld;
    int64_t j = 0;
    for (; j + 16 <= cols; j += 16) {  // Note [epilogue stores]
      const __m512i a = _mm512_add_epi32(_mm512_loadu_si512(a_row + j), bias);
      __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(a), mult), add);  // no FMA: onnxruntime rounds twice
      v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o_row + j), _mm512_cvtepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(v), zp)));
    }
    if (j < cols) {
      const __mmask16 m = static_cast<__mmask16>((1u << (cols - j)) - 1);
      const __m512i a = _mm512_add_epi32(_mm512_maskz_loadu_epi32(m, a_row + j), bias);
      __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(a), mult), add);
      v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
      _mm512_mask_cvtepi32_storeu_epi8(o_row + j, m, _mm512_add_epi32(_mm512_cvtps_epi32(v), zp));
    }
  }
}

void requantize_tile_bytes(const int32_t* acc, int64_t ld, int64_t rows, int64_t cols, const RowParams* p,
                           const QuantRange& q, uint8_t* out, int64_t out_ld) {
  requantize_tile_bytes_avx512(acc, ld, rows, cols, p, q, out, out_ld);
}

__attribute__((target("avx512f,avx512bw,avx512vl"))) void residual_tile_bytes_avx512(
    const int32_t* acc, int64_t ld, int64_t rows, int64_t cols, const RowParams* p, const QuantRange& rq,
    const void* z, bool z_signed, const ResidualParams& rp, const QuantRange& yq, uint8_t* out, int64_t out_ld) {
  const ResidualLanes lanes(rq, z_signed, rp, yq);  // once per tile (Note [epilogue stores])
  for (int64_t r = 0; r < rows; ++r) {
    residual_row_avx512(lanes, acc + r * ld, cols, p[r], static_cast<const uint8_t*>(z) + r * out_ld, out + r * out_ld);
  }
}

void residual_tile_bytes(const int32_t* acc, int64_t ld, int64_t rows, int64_t cols, const RowParams* p,
                         const QuantRange& rq, const void* z, bool z_signed, const ResidualParams& rp,
                         const QuantRange& yq, uint8_t* out, int64_t out_ld) {
  residual_tile_bytes_avx512(acc, ld, rows, cols, p, rq, z, z_signed, rp, yq, out, out_ld);
}

}  // namespace dnnx::int8_epilogue
