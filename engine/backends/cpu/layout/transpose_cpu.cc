// Transpose on the CPU, for any element size. At plan time the permutation is simplified:
// dims of size 1 are dropped and output dims that are also neighbours, in order, in the input
// are merged (NCHW -> NHWC is then [N, C, H*W] -> [N, H*W, C]). What remains is one of
//   copy         the permutation keeps the memory order: one memcpy
//   row copy     the innermost output dim is contiguous in the input: one memcpy per row
//   tiled        otherwise: the output dim that is contiguous in the input (p) and the innermost
//                output dim (q) are copied in square tiles, so that both the strided reads and
//                the contiguous writes stay in cache (a plain gather of a 2048x2048 matrix
//                misses on every read); every other dim is walked by an index counter
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/cpu/runtime/element_type.h"
#include "backends/cpu/runtime/thread_pool.h"
#include "runtime/kernel_registry.h"
#include "ops/layout/transpose.h"
#include "backends/cpu/layout/transpose_cpu.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DNNX_TRANSPOSE_AVX512 1
#define DNNX_TRANSPOSE_SSE2 1  // x86-64's baseline
#define DNNX_AVX512 __attribute__((target("avx512f")))
#endif

namespace dnnx {

namespace {

constexpr int64_t kTile = 32;  // elements per tile side: 32x32x8 bytes fit in L1
constexpr int64_t kBandRows = 16;  // Note [transposes across the pool]: a band of a block's rows

// The output dims, outermost first, after dropping size-1 dims and merging neighbours.
std::vector<StridedDim> merge_dims(const Shape& in, const std::vector<int64_t>& perm) {
  std::vector<int64_t> in_strides(in.size(), 1);
  for (size_t d = in.size(); d-- > 1;) in_strides[d - 1] = in_strides[d] * in[d];
  std::vector<StridedDim> dims;
  for (int64_t axis : perm) {
    if (in[axis] == 1) continue;
    // Mergeable when stepping the previous dim's innermost part jumps over exactly this one.
    if (!dims.empty() && dims.back().in_stride == in[axis] * in_strides[axis]) {
      dims.back().size *= in[axis];
      dims.back().in_stride = in_strides[axis];
    } else {
      dims.push_back({in[axis], in_strides[axis], 0});
    }
  }
  int64_t step = 1;
  for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
    it->out_stride = step;
    step *= it->size;
  }
  return dims;
}

}  // namespace

TransposePlan plan_transpose(const Shape& in, const std::vector<int64_t>& perm, size_t elem) {
  TransposePlan plan;
  plan.elem = elem;
  plan.n = numel(in);
  std::vector<StridedDim> dims = merge_dims(in, perm);
  if (plan.n == 0 || dims.size() <= 1) return plan;
  plan.q = dims.back();
  dims.pop_back();
  if (plan.q.in_stride == 1) {
    plan.path = TransposePath::RowCopy;
  } else {
    plan.path = TransposePath::Tiled;
    auto p = std::find_if(dims.begin(), dims.end(), [](const StridedDim& d) { return d.in_stride == 1; });
    plan.p = *p;
    dims.erase(p);
  }
  plan.rest = std::move(dims);
  // Note [transposes across the pool]
  int64_t count = 1;
  for (const StridedDim& d : plan.rest) count *= d.size;
  plan.row_bands = count < cpu_threads() && plan.path == TransposePath::Tiled;
  const int64_t units = plan.row_bands ? (plan.p.size + kBandRows - 1) / kBandRows : count;
  plan.workers = plan_workers(units, plan.n / std::max<int64_t>(1, units));
  return plan;
}

namespace {

template <class T>
void copy_tile(const uint8_t* x, uint8_t* y, int64_t rows, int64_t cols, int64_t in_col_stride,
               int64_t out_row_stride) {
  // y[r, c] (row stride out_row_stride) = x[r + c * in_col_stride], in elements of T.
  const T* xs = reinterpret_cast<const T*>(x);
  T* ys = reinterpret_cast<T*>(y);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) ys[r * out_row_stride + c] = xs[r + c * in_col_stride];
  }
}

void copy_tile_bytes(const uint8_t* x, uint8_t* y, int64_t rows, int64_t cols, int64_t in_col_stride,
                     int64_t out_row_stride, size_t elem) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      std::memcpy(y + (r * out_row_stride + c) * elem, x + (r + c * in_col_stride) * elem, elem);
    }
  }
}

// Note [narrow transpose]: an image's NCHW -> NHWC Transpose at the edge of a channels-last
// region has q = C = 3 (the [H*W, 3] block): tiles of 32 x 3 cost more in setup than in copies
// (MobileNetV3-small's input, [1, 3, 224, 224], 0.079 ms). With Q <= 4 output columns of 4-byte
// elements the block is Q read streams interleaved into one written stream, row by row.
template <int Q>
void interleave_rows(const uint32_t* x, uint32_t* y, int64_t rows, int64_t in_col_stride, int64_t out_row_stride) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int c = 0; c < Q; ++c) y[r * out_row_stride + c] = x[r + c * in_col_stride];
  }
}

#ifdef DNNX_TRANSPOSE_AVX512
// Note [narrow transpose in avx512]: the RGB image's interleave (Q = 3, rows packed 3 apart) ran
// element by element, 0.078-0.084 ms for [3, 224 * 224] (MobileNetV2's input, 1 thread, this
// 2-core Zen 4 EPYC; onnxruntime's reorder into its blocked layout: 0.006). Here 16 pixels at a
// time: one load from each of the 3 planes, and each of the 3 output vectors is a permute of the
// first plane with the other two permuted over it under lane masks (lane l of output vector k
// holds pixel (16k + l) / 3 of plane (16k + l) % 3). The last pixels go one at a time. 0.045
// ms now (Model.profile medians of 40): what is left is the 1.2 MB moved.
DNNX_AVX512 void interleave3_avx512(const float* x, float* y, int64_t rows, int64_t in_col_stride) {
  __m512i index[3];
  __mmask16 from_second[3], from_third[3];
  for (int k = 0; k < 3; ++k) {
    alignas(64) int32_t lanes[16];
    unsigned second = 0, third = 0;
    for (int l = 0; l < 16; ++l) {
      lanes[l] = (16 * k + l) / 3;
      second |= static_cast<unsigned>((16 * k + l) % 3 == 1) << l;
      third |= static_cast<unsigned>((16 * k + l) % 3 == 2) << l;
    }
    index[k] = _mm512_load_si512(lanes);
    from_second[k] = static_cast<__mmask16>(second);
    from_third[k] = static_cast<__mmask16>(third);
  }
  const float* x1 = x + in_col_stride;
  const float* x2 = x + 2 * in_col_stride;
  int64_t r = 0;
  for (; r + 16 <= rows; r += 16) {
    const __m512 a = _mm512_loadu_ps(x + r), b = _mm512_loadu_ps(x1 + r), c = _mm512_loadu_ps(x2 + r);
    for (int k = 0; k < 3; ++k) {
      __m512 v = _mm512_permutexvar_ps(index[k], a);
      v = _mm512_mask_permutexvar_ps(v, from_second[k], index[k], b);
      v = _mm512_mask_permutexvar_ps(v, from_third[k], index[k], c);
      _mm512_storeu_ps(y + 3 * r + 16 * k, v);
    }
  }
  for (; r < rows; ++r) y[3 * r] = x[r], y[3 * r + 1] = x1[r], y[3 * r + 2] = x2[r];
}
#endif

bool interleave_block(const TransposePlan& plan, const StridedDim& p, const uint8_t* x, uint8_t* y) {
  if (plan.elem != 4 || plan.q.size > 4) return false;
  const uint32_t* xs = reinterpret_cast<const uint32_t*>(x);
  uint32_t* ys = reinterpret_cast<uint32_t*>(y);
  const int64_t rows = p.size, in_stride = plan.q.in_stride, out_stride = p.out_stride;
#ifdef DNNX_TRANSPOSE_AVX512
  static const bool has = __builtin_cpu_supports("avx512f");
  if (has && plan.q.size == 3 && out_stride == 3) {  // Note [narrow transpose in avx512]
    interleave3_avx512(reinterpret_cast<const float*>(x), reinterpret_cast<float*>(y), rows, in_stride);
    return true;
  }
#endif
  switch (plan.q.size) {
    case 1: interleave_rows<1>(xs, ys, rows, in_stride, out_stride); break;
    case 2: interleave_rows<2>(xs, ys, rows, in_stride, out_stride); break;
    case 3: interleave_rows<3>(xs, ys, rows, in_stride, out_stride); break;
    default: interleave_rows<4>(xs, ys, rows, in_stride, out_stride); break;
  }
  return true;
}

// Note [transpose tiles in registers]: the tiled path copied one 4-byte element at a time, and
// the layout conversions at the edges of the CPU's channels-last regions are such copies:
// ShuffleNet-v2's 47 of them ([784, 116] and the like, NHWC -> NCHW around its channel shuffle
// and back) took 0.66 ms of its 4.5 ms at 1 thread. With AVX-512, a block of 4-byte elements
// goes in 16 x 16 tiles: 16 loads of 16 elements along p, the transpose in registers (unpacks of
// 32- and 64-bit pairs, then two rounds of 128-bit lane shuffles), 16 stores along q; a tile at
// an edge loads and stores only its own lanes (masked). A copy moves bits as they are (NaN
// payloads included), so nothing else changes. ([784, 116] -> [116, 784] and back 28-30 -> 11
// us, [3136, 24] 22-23 -> 11-20, 1 thread, this 2-core EPYC.)
#ifdef DNNX_TRANSPOSE_AVX512
// y[r * out_row_stride + c] = x[r + c * in_col_stride] for r < rows, c < cols (both at most
// 16), in 4-byte elements: a tile at the edge loads and stores only its own lanes and rows.
DNNX_AVX512 inline void transpose_tile16(const float* x, float* y, int64_t in_col_stride, int64_t out_row_stride,
                                         int rows = 16, int cols = 16) {
  __m512 r[16], t[16];
  const __mmask16 row_lanes = static_cast<__mmask16>((1u << rows) - 1), col_lanes = static_cast<__mmask16>((1u << cols) - 1);
  for (int c = 0; c < 16; ++c)
    r[c] = c < cols ? _mm512_maskz_loadu_ps(row_lanes, x + c * in_col_stride) : _mm512_setzero_ps();
  for (int i = 0; i < 8; ++i) {  // pairs of 32-bit elements
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {  // pairs of 64-bit elements
    const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]);
    const __m512d c = _mm512_castps_pd(t[4 * i + 2]), d = _mm512_castps_pd(t[4 * i + 3]);
    r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  for (int i = 0; i < 2; ++i) {  // 128-bit lanes, within each half of the tile
    for (int k = 0; k < 4; ++k) {
      t[8 * i + k] = _mm512_shuffle_f32x4(r[8 * i + k], r[8 * i + 4 + k], 0x88);
      t[8 * i + 4 + k] = _mm512_shuffle_f32x4(r[8 * i + k], r[8 * i + 4 + k], 0xdd);
    }
  }
  for (int k = 0; k < 8; ++k) {  // 128-bit lanes across the halves
    r[k] = _mm512_shuffle_f32x4(t[k], t[8 + k], 0x88);
    r[8 + k] = _mm512_shuffle_f32x4(t[k], t[8 + k], 0xdd);
  }
  for (int k = 0; k < rows; ++k) _mm512_mask_storeu_ps(y + k * out_row_stride, col_lanes, r[k]);
}

DNNX_AVX512 void copy_block_tiles16(const TransposePlan& plan, const StridedDim& p, const uint8_t* x, uint8_t* y) {
  const float* xs = reinterpret_cast<const float*>(x);
  float* ys = reinterpret_cast<float*>(y);
  const int64_t rows = p.size, cols = plan.q.size, ics = plan.q.in_stride, ors = p.out_stride;
  for (int64_t i0 = 0; i0 < rows; i0 += 16) {
    const int n = static_cast<int>(std::min<int64_t>(16, rows - i0));
    for (int64_t j0 = 0; j0 < cols; j0 += 16) {
      const int m = static_cast<int>(std::min<int64_t>(16, cols - j0));
      transpose_tile16(xs + i0 + j0 * ics, ys + i0 * ors + j0, ics, ors, n, m);
    }
  }
}
#endif

bool copy_block_avx512(const TransposePlan& plan, const StridedDim& p, const uint8_t* x, uint8_t* y) {
#ifdef DNNX_TRANSPOSE_AVX512
  static const bool has = __builtin_cpu_supports("avx512f");
  if (!has || plan.elem != 4 || p.size < 16 || plan.q.size < 16) return false;
  copy_block_tiles16(plan, p, x, y);
  return true;
#else
  (void)plan, (void)p, (void)x, (void)y;
  return false;
#endif
}

// Note [transpose tiles in avx2]: the same 4-byte tiles for a CPU with AVX2 but no AVX-512, 8 x
// 8 at a time (8 loads along p, unpacks of 32-bit pairs, shuffles of 64-bit pairs, 128-bit lane
// permutes, 8 stores along q), the edges element by element: ShuffleNet-v2's channel-shuffle
// conversions took 1.64 ms of its 11.8 at 1 thread on this 2-core Zen 3 EPYC.
#ifdef DNNX_TRANSPOSE_AVX512
#define DNNX_AVX2 __attribute__((target("avx2")))

// y[r * out_row_stride + c] = x[r + c * in_col_stride] for r, c < 8, in 4-byte elements.
DNNX_AVX2 inline void transpose_tile8(const float* x, float* y, int64_t in_col_stride, int64_t out_row_stride) {
  __m256 r[8], t[8];
  for (int c = 0; c < 8; ++c) r[c] = _mm256_loadu_ps(x + c * in_col_stride);
  for (int i = 0; i < 4; ++i) {  // pairs of 32-bit elements
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 2; ++i) {  // pairs of 64-bit elements
    r[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    r[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    r[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    r[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  for (int k = 0; k < 4; ++k) {  // 128-bit lanes: rows k and k + 4 of the tile
    _mm256_storeu_ps(y + k * out_row_stride, _mm256_permute2f128_ps(r[k], r[4 + k], 0x20));
    _mm256_storeu_ps(y + (k + 4) * out_row_stride, _mm256_permute2f128_ps(r[k], r[4 + k], 0x31));
  }
}

DNNX_AVX2 void copy_block_tiles8(const TransposePlan& plan, const StridedDim& p, const uint8_t* x, uint8_t* y) {
  const float* xs = reinterpret_cast<const float*>(x);
  float* ys = reinterpret_cast<float*>(y);
  const int64_t rows = p.size, cols = plan.q.size, ics = plan.q.in_stride, ors = p.out_stride;
  const int64_t whole_rows = rows / 8 * 8, whole_cols = cols / 8 * 8;
  for (int64_t i0 = 0; i0 < whole_rows; i0 += 8) {
    for (int64_t j0 = 0; j0 < whole_cols; j0 += 8) transpose_tile8(xs + i0 + j0 * ics, ys + i0 * ors + j0, ics, ors);
  }
  for (int64_t i = 0; i < rows; ++i) {  // the edges: the last columns of every row, the last rows
    for (int64_t j = i < whole_rows ? whole_cols : 0; j < cols; ++j) ys[i * ors + j] = xs[i + j * ics];
  }
}
#endif

bool copy_block_avx2(const TransposePlan& plan, const StridedDim& p, const uint8_t* x, uint8_t* y) {
#ifdef DNNX_TRANSPOSE_AVX512
  static const bool has = __builtin_cpu_supports("avx2");
  if (!has || plan.elem != 4 || p.size < 8 || plan.q.size < 8) return false;
  copy_block_tiles8(plan, p, x, y);
  return true;
#else
  (void)plan, (void)p, (void)x, (void)y;
  return false;
#endif
}

// Note [byte transpose tiles]: 1-byte elements (the uint8 values at the edges of the CPU's
// channels-last int8 regions, Note [int8 nhwc conv]) went one byte at a time through
// copy_tile_bytes: [64, 3136] -> [3136, 64] of int8 ResNet-50 took 0.44 ms. Whole 16 x 16 tiles
// now go through SSE2 registers: 16 loads along p, four rounds of byte unpacks (round k pairs
// rows i and i + 8, which is a transpose after four rounds), 16 stores along q; the edges go byte
// by byte. y[r * out_row_stride + c] = x[r + c * in_col_stride], r, c < 16.
#ifdef DNNX_TRANSPOSE_SSE2
inline void transpose_tile16_bytes(const uint8_t* x, uint8_t* y, int64_t in_col_stride, int64_t out_row_stride) {
  __m128i a[16], b[16];
  for (int c = 0; c < 16; ++c) a[c] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + c * in_col_stride));
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 8; ++i) {
      b[2 * i] = _mm_unpacklo_epi8(a[i], a[i + 8]);
      b[2 * i + 1] = _mm_unpackhi_epi8(a[i], a[i + 8]);
    }
    std::copy(b, b + 16, a);
  }
  for (int r = 0; r < 16; ++r) _mm_storeu_si128(reinterpret_cast<__m128i*>(y + r * out_row_stride), a[r]);
}
#endif

bool copy_block_bytes16(const TransposePlan& plan, const StridedDim& p, const uint8_t* x, uint8_t* y) {
#ifdef DNNX_TRANSPOSE_SSE2
  if (plan.elem != 1 || p.size < 16 || plan.q.size < 16) return false;
  const int64_t rows = p.size, cols = plan.q.size, ics = plan.q.in_stride, ors = p.out_stride;
  const int64_t whole_rows = rows / 16 * 16, whole_cols = cols / 16 * 16;
  for (int64_t i0 = 0; i0 < whole_rows; i0 += 16) {
    for (int64_t j0 = 0; j0 < whole_cols; j0 += 16) transpose_tile16_bytes(x + i0 + j0 * ics, y + i0 * ors + j0, ics, ors);
  }
  for (int64_t i = 0; i < rows; ++i) {  // the edges: the last columns of every row, the last rows
    for (int64_t j = i < whole_rows ? whole_cols : 0; j < cols; ++j) y[i * ors + j] = x[i + j * ics];
  }
  return true;
#else
  (void)plan, (void)p, (void)x, (void)y;
  return false;
#endif
}

// The [p, q] block: y[i * p.out_stride + j] = x[i + j * q.in_stride], tile by tile (p: the
// plan's, or a band of its rows).
void copy_block(const TransposePlan& plan, const StridedDim& p, const uint8_t* x, uint8_t* y) {
  if (interleave_block(plan, p, x, y)) return;  // Note [narrow transpose]
  if (copy_block_avx512(plan, p, x, y)) return;  // Note [transpose tiles in registers]
  if (copy_block_avx2(plan, p, x, y)) return;    // Note [transpose tiles in avx2]
  if (copy_block_bytes16(plan, p, x, y)) return;  // Note [byte transpose tiles]
  const StridedDim& q = plan.q;
  const size_t elem = plan.elem;
  for (int64_t i0 = 0; i0 < p.size; i0 += kTile) {
    const int64_t rows = std::min(kTile, p.size - i0);
    for (int64_t j0 = 0; j0 < q.size; j0 += kTile) {
      const int64_t cols = std::min(kTile, q.size - j0);
      const uint8_t* xt = x + (i0 + j0 * q.in_stride) * elem;
      uint8_t* yt = y + (i0 * p.out_stride + j0) * elem;
      switch (elem) {
        case 4: copy_tile<uint32_t>(xt, yt, rows, cols, q.in_stride, p.out_stride); break;
        case 8: copy_tile<uint64_t>(xt, yt, rows, cols, q.in_stride, p.out_stride); break;
        default: copy_tile_bytes(xt, yt, rows, cols, q.in_stride, p.out_stride, elem);
      }
    }
  }
}

class TransposeKernel final : public Kernel {
 public:
  explicit TransposeKernel(TransposePlan plan) : plan_(std::move(plan)) {}
  void run(const KernelArgs& args) const override { transpose_copy(plan_, args.inputs[0], args.outputs[0]); }

 private:
  TransposePlan plan_;
};

KernelChoice transpose_factory(const Node& node, const std::vector<ValueInfo>& inputs,
                               const std::vector<TensorInfo>&) {
  const TensorInfo& x = inputs[0].info;
  TransposePlan plan = plan_transpose(x.shape, transpose_perm(node, x.shape.size()), dtype_size(x.dtype));
  KernelChoice choice;
  choice.algorithm = transpose_path_name(plan.path);
  choice.kernel = std::make_unique<TransposeKernel>(std::move(plan));
  return choice;
}

}  // namespace

namespace {

// Counter positions [first, last): each one row (RowCopy) or one [p, q] block (Tiled).
void copy_positions(const TransposePlan& plan, const uint8_t* x, uint8_t* y, int64_t first, int64_t last) {
  const std::vector<StridedDim>& rest = plan.rest;
  std::vector<int64_t> index(rest.size(), 0);
  int64_t in_off = 0, out_off = 0;  // in elements
  for (size_t d = rest.size(), left = static_cast<size_t>(first); d-- > 0;) {
    index[d] = static_cast<int64_t>(left % static_cast<size_t>(rest[d].size));
    left /= static_cast<size_t>(rest[d].size);
    in_off += index[d] * rest[d].in_stride;
    out_off += index[d] * rest[d].out_stride;
  }
  for (int64_t i = first; i < last; ++i) {
    const uint8_t* xi = x + in_off * plan.elem;
    uint8_t* yi = y + out_off * plan.elem;
    if (plan.path == TransposePath::RowCopy) {
      std::memcpy(yi, xi, static_cast<size_t>(plan.q.size) * plan.elem);
    } else {
      copy_block(plan, plan.p, xi, yi);
    }
    for (size_t d = rest.size(); d-- > 0;) {
      in_off += rest[d].in_stride;
      out_off += rest[d].out_stride;
      if (++index[d] < rest[d].size) break;
      in_off -= rest[d].in_stride * rest[d].size;
      out_off -= rest[d].out_stride * rest[d].size;
      index[d] = 0;
    }
  }
}

}  // namespace

// Note [transposes across the pool]: a transpose ran on the calling thread whatever the thread
// count, so at 2 threads the layout conversions of a channels-last region (ShuffleNet-v2's 47,
// MobileViT's 23 and its 24 row copies) left the second core idle. The plan now splits the copy
// across the pool (plan_workers: 32K elements a worker at least): the counter positions where
// there are as many as threads, else bands of kBandRows rows of the one [p, q] block. Each
// element is copied once, by whichever thread: the same bytes.
void transpose_copy(const TransposePlan& plan, const void* x_bytes, void* y_bytes) {
  const uint8_t* x = static_cast<const uint8_t*>(x_bytes);
  uint8_t* y = static_cast<uint8_t*>(y_bytes);
  if (plan.n == 0) return;
  if (plan.path == TransposePath::Copy) {
    std::memcpy(y, x, static_cast<size_t>(plan.n) * plan.elem);
    return;
  }
  int64_t count = 1;
  for (const StridedDim& d : plan.rest) count *= d.size;
  if (plan.workers <= 1) {
    copy_positions(plan, x, y, 0, count);
  } else if (!plan.row_bands) {
    cpu_thread_pool().parallel_for(count, [&](int64_t first, int64_t last, int) {
      copy_positions(plan, x, y, first, last);
    }, plan.workers);
  } else {
    // Tiled with fewer counter positions than threads: each position's block in bands of rows
    const int64_t bands = (plan.p.size + kBandRows - 1) / kBandRows;
    for (int64_t i = 0; i < count; ++i) {
      int64_t in_off = 0, out_off = 0;
      for (size_t d = plan.rest.size(), left = static_cast<size_t>(i); d-- > 0;) {
        const int64_t at = static_cast<int64_t>(left % static_cast<size_t>(plan.rest[d].size));
        left /= static_cast<size_t>(plan.rest[d].size);
        in_off += at * plan.rest[d].in_stride;
        out_off += at * plan.rest[d].out_stride;
      }
      cpu_thread_pool().parallel_for(bands, [&](int64_t first, int64_t last, int) {
        const int64_t r0 = first * kBandRows, r1 = std::min(plan.p.size, last * kBandRows);
        const StridedDim band{r1 - r0, plan.p.in_stride, plan.p.out_stride};
        copy_block(plan, band, x + (in_off + r0) * plan.elem, y + (out_off + r0 * plan.p.out_stride) * plan.elem);
      }, plan.workers);
    }
  }
}

const char* transpose_path_name(TransposePath path) {
  switch (path) {
    case TransposePath::Copy: return "copy";
    case TransposePath::RowCopy: return "row copy";
    case TransposePath::Tiled: return "tiled";
  }
  return "?";
}

void register_cpu_transpose_kernels(KernelRegistry& r) {
  r.add("Transpose", transpose_factory).with_dtypes(movable_types());
}

}  // namespace dnnx
