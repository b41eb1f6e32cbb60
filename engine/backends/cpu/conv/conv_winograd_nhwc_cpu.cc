// Note [channels-last winograd]: the 3x3 unit-stride convs of a channels-last region (ResNet's
// layers: 11 of ResNet-50's 16 3x3 convs, every 3x3 conv of ResNet-18) through Winograd's
// F(2x2, 3x3) as in ONNX's layout (Note [winograd conv] in conv_winograd_cpu.cc, the same
// transforms: B^T d B, G g G^T, A^T m A), on [N, H, W, C] data:
//   - U = G g G^T for every (filter, channel) once at plan time, each of the 16 elements packed
//     for the dense tiles (Note [packed nhwc filter]);
//   - per item of up to 64 output tiles (2x2 pixels): V[e][tile][c] = (B^T d B)[e], the channels
//     the fast axis (one vectorized loop over C per tile); then 16 products M[e] = V[e] U[e] on
//     the packed tiles, rows read in place; then Y = A^T M A per tile with the epilogue (bias,
//     residual, clamp) as the pixels are stored, and the activation over them.
// 16 multiplications per (tile, filter, channel) instead of 36 direct ones. Each output is one
// item's sum in a fixed order, so results do not depend on the thread count.
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "backends/cpu/conv/conv_activation_cpu.h"
#include "backends/cpu/conv/conv_nhwc_tiles_cpu.h"
#include "backends/cpu/conv/conv_winograd_nhwc_cpu.h"
#include "backends/cpu/runtime/avx2_lanes.h"
#include "backends/cpu/runtime/fast_math.h"
#include "backends/cpu/runtime/thread_pool.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DNNX_WINOGRAD_AVX512 1
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // _mm512_max_ps's pass-through operand (GCC 12)
#endif

namespace dnnx {

namespace {

constexpr int64_t kXi = 16;          // elements of a 4x4 tile
constexpr int64_t kMaxItemTiles = 64;

// V's 16 planes from one tile's 16 input rows d[i * 4 + j] (C floats each), v[e * ve + c].
void input_transform_portable(const float* const* d, float* v, int64_t ve, int64_t channels) {
  for (int64_t c = 0; c < channels; ++c) {
    float t[4][4];
    for (int j = 0; j < 4; ++j) {  // t = B^T d
      const float d0 = d[0 * 4 + j][c], d1 = d[1 * 4 + j][c], d2 = d[2 * 4 + j][c], d3 = d[3 * 4 + j][c];
      t[0][j] = d0 - d2;
      t[1][j] = d1 + d2;
      t[2][j] = d2 - d1;
      t[3][j] = d1 - d3;
    }
    for (int i = 0; i < 4; ++i) {  // v = t B
      v[(i * 4 + 0) * ve + c] = t[i][0] - t[i][2];
      v[(i * 4 + 1) * ve + c] = t[i][1] + t[i][2];
      v[(i * 4 + 2) * ve + c] = t[i][2] - t[i][1];
      v[(i * 4 + 3) * ve + c] = t[i][1] - t[i][3];
    }
  }
}

// One tile's 2x2 outputs y[q] (filters [0, K), K floats each; null: outside Y) from M's 16 planes
// m[e * me + k], then + bias, + residual z[q], clamp.
void output_transform_portable(const float* m, int64_t me, float* const* y, const float* const* z,
                                         const float* bias, bool clamp, float lo, float hi, int64_t filters) {
  for (int64_t k = 0; k < filters; ++k) {
    float s[2][4];
    for (int j = 0; j < 4; ++j) {  // s = A^T m
      const float m0 = m[(0 * 4 + j) * me + k], m1 = m[(1 * 4 + j) * me + k], m2 = m[(2 * 4 + j) * me + k],
                  m3 = m[(3 * 4 + j) * me + k];
      s[0][j] = m0 + m1 + m2;
      s[1][j] = m1 - m2 - m3;
    }
    for (int i = 0; i < 2; ++i) {
      float out[2] = {s[i][0] + s[i][1] + s[i][2], s[i][1] - s[i][2] - s[i][3]};  // s A
      for (int j = 0; j < 2; ++j) {
        float* dst = y[i * 2 + j];
        if (!dst) continue;
        float value = out[j];
        if (bias) value = value + bias[k];
        if (z[i * 2 + j]) value = value + z[i * 2 + j][k];
        if (clamp) {
          value = value < lo ? lo : value;
          value = value > hi ? hi : value;
        }
        dst[k] = value;
      }
    }
  }
}

#ifdef DNNX_WINOGRAD_AVX512
#define DNNX_AVX512 __attribute__((target("avx512f")))

DNNX_AVX512 inline __mmask16 lanes(int64_t valid) {
  return valid >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << valid) - 1);
}

// input_transform_portable's sums, 16 channels at a time (the last ones masked).
DNNX_AVX512 void input_transform_avx512(const float* const* d, float* v, int64_t ve, int64_t channels) {
  for (int64_t c = 0; c < channels; c += 16) {
    const __mmask16 mask = lanes(channels - c);
    __m512 t[4][4];
    for (int j = 0; j < 4; ++j) {
      const __m512 d0 = _mm512_maskz_loadu_ps(mask, d[0 * 4 + j] + c), d1 = _mm512_maskz_loadu_ps(mask, d[1 * 4 + j] + c);
      const __m512 d2 = _mm512_maskz_loadu_ps(mask, d[2 * 4 + j] + c), d3 = _mm512_maskz_loadu_ps(mask, d[3 * 4 + j] + c);
      t[0][j] = _mm512_sub_ps(d0, d2);
      t[1][j] = _mm512_add_ps(d1, d2);
      t[2][j] = _mm512_sub_ps(d2, d1);
      t[3][j] = _mm512_sub_ps(d1, d3);
    }
    for (int i = 0; i < 4; ++i) {
      _mm512_mask_storeu_ps(v + (i * 4 + 0) * ve + c, mask, _mm512_sub_ps(t[i][0], t[i][2]));
      _mm512_mask_storeu_ps(v + (i * 4 + 1) * ve + c, mask, _mm512_add_ps(t[i][1], t[i][2]));
      _mm512_mask_storeu_ps(v + (i * 4 + 2) * ve + c, mask, _mm512_sub_ps(t[i][2], t[i][1]));
      _mm512_mask_storeu_ps(v + (i * 4 + 3) * ve + c, mask, _mm512_sub_ps(t[i][1], t[i][3]));
    }
  }
}

// output_transform_portable's sums and epilogue, 16 filters at a time (the last ones masked).
DNNX_AVX512 void output_transform_avx512(const float* m, int64_t me, float* const* y, const float* const* z,
                                         const float* bias, bool clamp, float lo, float hi, int64_t filters) {
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  for (int64_t k = 0; k < filters; k += 16) {
    const __mmask16 mask = lanes(filters - k);
    __m512 s[2][4];
    for (int j = 0; j < 4; ++j) {
      const __m512 m0 = _mm512_maskz_loadu_ps(mask, m + (0 * 4 + j) * me + k);
      const __m512 m1 = _mm512_maskz_loadu_ps(mask, m + (1 * 4 + j) * me + k);
      const __m512 m2 = _mm512_maskz_loadu_ps(mask, m + (2 * 4 + j) * me + k);
      const __m512 m3 = _mm512_maskz_loadu_ps(mask, m + (3 * 4 + j) * me + k);
      s[0][j] = _mm512_add_ps(_mm512_add_ps(m0, m1), m2);
      s[1][j] = _mm512_sub_ps(_mm512_sub_ps(m1, m2), m3);
    }
    const __m512 b = bias ? _mm512_maskz_loadu_ps(mask, bias + k) : _mm512_setzero_ps();
    for (int i = 0; i < 2; ++i) {
      const __m512 out[2] = {_mm512_add_ps(_mm512_add_ps(s[i][0], s[i][1]), s[i][2]),
                             _mm512_sub_ps(_mm512_sub_ps(s[i][1], s[i][2]), s[i][3])};
      for (int j = 0; j < 2; ++j) {
        float* dst = y[i * 2 + j];
        if (!dst) continue;
        __m512 value = out[j];
        if (bias) value = _mm512_add_ps(value, b);
        if (z[i * 2 + j]) value = _mm512_add_ps(value, _mm512_maskz_loadu_ps(mask, z[i * 2 + j] + k));
        if (clamp) value = _mm512_min_ps(vhi, _mm512_max_ps(vlo, value));  // NaN passes (second operand)
        _mm512_mask_storeu_ps(dst + k, mask, value);
      }
    }
  }
}

// The same sums in AVX2 (Note [avx2 tiles]), 8 channels or filters at a time, the last ones
// masked: adds and subtracts only, so the same bits as the portable and AVX-512 loops.
DNNX_TARGET_AVX2 void input_transform_avx2(const float* const* d, float* v, int64_t ve, int64_t channels) {
  for (int64_t c = 0; c < channels; c += 8) {
    const __m256i mask = lanes8(channels - c);
    const bool full = channels - c >= 8;
    __m256 t[4][4];
    for (int j = 0; j < 4; ++j) {
      const __m256 d0 = load8(d[0 * 4 + j] + c, mask, full), d1 = load8(d[1 * 4 + j] + c, mask, full);
      const __m256 d2 = load8(d[2 * 4 + j] + c, mask, full), d3 = load8(d[3 * 4 + j] + c, mask, full);
      t[0][j] = _mm256_sub_ps(d0, d2);
      t[1][j] = _mm256_add_ps(d1, d2);
      t[2][j] = _mm256_sub_ps(d2, d1);
      t[3][j] = _mm256_sub_ps(d1, d3);
    }
    for (int i = 0; i < 4; ++i) {
      store8(v + (i * 4 + 0) * ve + c, _mm256_sub_ps(t[i][0], t[i][2]), mask, full);
      store8(v + (i * 4 + 1) * ve + c, _mm256_add_ps(t[i][1], t[i][2]), mask, full);
      store8(v + (i * 4 + 2) * ve + c, _mm256_sub_ps(t[i][2], t[i][1]), mask, full);
      store8(v + (i * 4 + 3) * ve + c, _mm256_sub_ps(t[i][1], t[i][3]), mask, full);
    }
  }
}

DNNX_TARGET_AVX2 void output_transform_avx2(const float* m, int64_t me, float* const* y, const float* const* z,
                                     const float* bias, bool clamp, float lo, float hi, int64_t filters) {
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  for (int64_t k = 0; k < filters; k += 8) {
    const __m256i mask = lanes8(filters - k);
    const bool full = filters - k >= 8;
    __m256 s[2][4];
    for (int j = 0; j < 4; ++j) {
      const __m256 m0 = load8(m + (0 * 4 + j) * me + k, mask, full);
      const __m256 m1 = load8(m + (1 * 4 + j) * me + k, mask, full);
      const __m256 m2 = load8(m + (2 * 4 + j) * me + k, mask, full);
      const __m256 m3 = load8(m + (3 * 4 + j) * me + k, mask, full);
      s[0][j] = _mm256_add_ps(_mm256_add_ps(m0, m1), m2);
      s[1][j] = _mm256_sub_ps(_mm256_sub_ps(m1, m2), m3);
    }
    const __m256 b = bias ? load8(bias + k, mask, full) : _mm256_setzero_ps();
    for (int i = 0; i < 2; ++i) {
      const __m256 out[2] = {_mm256_add_ps(_mm256_add_ps(s[i][0], s[i][1]), s[i][2]),
                             _mm256_sub_ps(_mm256_sub_ps(s[i][1], s[i][2]), s[i][3])};
      for (int j = 0; j < 2; ++j) {
        float* dst = y[i * 2 + j];
        if (!dst) continue;
        __m256 value = out[j];
        if (bias) value = _mm256_add_ps(value, b);
        if (z[i * 2 + j]) value = _mm256_add_ps(value, load8(z[i * 2 + j] + k, mask, full));
        if (clamp) value = _mm256_min_ps(vhi, _mm256_max_ps(vlo, value));  // NaN passes (second operand)
        store8(dst + k, value, mask, full);
      }
    }
  }
}
#endif

void input_transform(const float* const* d, float* v, int64_t ve, int64_t channels) {
#ifdef DNNX_WINOGRAD_AVX512
  if (nhwc_tiles_have_avx512()) return input_transform_avx512(d, v, ve, channels);
  if (nhwc_tiles_have_avx2()) return input_transform_avx2(d, v, ve, channels);
#endif
  input_transform_portable(d, v, ve, channels);
}

void output_transform(const float* m, int64_t me, float* const* y, const float* const* z, const float* bias,
                      bool clamp, float lo, float hi, int64_t filters) {
#ifdef DNNX_WINOGRAD_AVX512
  if (nhwc_tiles_have_avx512()) return output_transform_avx512(m, me, y, z, bias, clamp, lo, hi, filters);
  if (nhwc_tiles_have_avx2()) return output_transform_avx2(m, me, y, z, bias, clamp, lo, hi, filters);
#endif
  output_transform_portable(m, me, y, z, bias, clamp, lo, hi, filters);
}

// U[e] [K, C] = (G g G^T)[e] for filter k and channel c of w [K, 3, 3, C].
std::vector<float> filter_transform(const float* w, int64_t filters, int64_t channels) {
  std::vector<float> u(static_cast<size_t>(kXi * filters * channels));
  for (int64_t k = 0; k < filters; ++k) {
    for (int64_t c = 0; c < channels; ++c) {
      float g[3][3], t[4][3];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) g[i][j] = w[((k * 3 + i) * 3 + j) * channels + c];
      for (int j = 0; j < 3; ++j) {  // t = G g
        t[0][j] = g[0][j];
        t[1][j] = 0.5f * (g[0][j] + g[1][j] + g[2][j]);
        t[2][j] = 0.5f * (g[0][j] - g[1][j] + g[2][j]);
        t[3][j] = g[2][j];
      }
      for (int i = 0; i < 4; ++i) {  // u = t G^T
        const float r[4] = {t[i][0], 0.5f * (t[i][0] + t[i][1] + t[i][2]), 0.5f * (t[i][0] - t[i][1] + t[i][2]),
                            t[i][2]};
        for (int j = 0; j < 4; ++j) u[static_cast<size_t>(((i * 4 + j) * filters + k) * channels + c)] = r[j];
      }
    }
  }
  return u;
}

class WinogradNhwcKernel final : public Kernel {
 public:
  WinogradNhwcKernel(const NhwcConv& g, const float* w, bool has_bias, bool residual, NhwcEpilogue clamp,
                     ConvActivation act)
      : g_(g), shape_(nhwc_tile_shape(g.k, g.c, 1)), has_bias_(has_bias), residual_(residual), clamp_(clamp), act_(act),
        zeros_(static_cast<size_t>(std::max<int64_t>(g.c, 1)), 0.0f) {
    th_ = (g.oh + 1) / 2, tw_ = (g.ow + 1) / 2;
    tiles_ = g.n * th_ * tw_;
    const int64_t p = shape_.pixels;
    // Each item streams its filters' part of U. Where U is past L2's share (1 MiB: ResNet's 256- and
    // 512-channel layers, of few tiles), the threads split the filter panels and each streams its
    // part once; else they split the tiles, two items per thread.
    const int64_t u_bytes = kXi * g.c * g.k * static_cast<int64_t>(sizeof(float));
    const bool big_u = u_bytes > (int64_t{1} << 20);
    filter_groups_ = big_u ? std::max<int64_t>(1, std::min<int64_t>(shape_.panels(), cpu_threads())) : 1;
    const int64_t splits = big_u ? 1 : 2 * cpu_threads();
    const int64_t wanted = std::max<int64_t>(1, (tiles_ + splits - 1) / splits);
    item_tiles_ = std::min(kMaxItemTiles / p * p, (wanted + p - 1) / p * p);  // whole strips: the row table's size
    tile_items_ = (tiles_ + item_tiles_ - 1) / item_tiles_;
    items_ = tile_items_ * filter_groups_;
    workers_ = plan_workers(items_, item_tiles_ * kXi * g.c * g.k / filter_groups_);
    const std::vector<float> u = filter_transform(w, g.k, g.c);
    packed_.resize(static_cast<size_t>(kXi * shape_.packed_size()));
    for (int64_t e = 0; e < kXi; ++e) {
      pack_nhwc_filter(shape_, u.data() + e * g.k * g.c, packed_.data() + e * shape_.packed_size());
    }
  }

  int workers() const { return workers_; }
  // Per worker: V [16, item tiles, C], M [16, item tiles, K], the row table.
  size_t worker_floats() const { return static_cast<size_t>(kXi * item_tiles_ * (g_.c + g_.k)); }
  size_t table_bytes() const { return static_cast<size_t>(item_tiles_) * sizeof(float*); }
  size_t workspace_bytes() const { return workers_ * (worker_floats() * sizeof(float) + table_bytes()); }

  void run(const KernelArgs& args) const override {
    char* base = static_cast<char*>(args.workspace);
    const size_t per_worker = worker_floats() * sizeof(float) + table_bytes();
    cpu_thread_pool().parallel_for(items_, [&](int64_t begin, int64_t end, int worker) {
      float* v = reinterpret_cast<float*>(base + worker * per_worker);
      float* m = v + kXi * item_tiles_ * g_.c;
      const float** table = reinterpret_cast<const float**>(base + worker * per_worker + worker_floats() * sizeof(float));
      for (int64_t item = begin; item < end; ++item) run_item(args, item / filter_groups_, item % filter_groups_, v, m, table);
    }, workers_);
  }

 private:
  // Tiles of item `item`, the filter panels of group `group` (its part of M and Y).
  void run_item(const KernelArgs& args, int64_t item, int64_t group, float* v, float* m, const float** table) const {
    const int64_t t0 = item * item_tiles_, count = std::min(item_tiles_, tiles_ - t0);
    const int64_t j0 = group * shape_.panels() / filter_groups_, j1 = (group + 1) * shape_.panels() / filter_groups_;
    const int64_t f0 = std::min(g_.k, j0 * shape_.panel_width()), f1 = std::min(g_.k, j1 * shape_.panel_width());
    const float* x = args.in(0);
    const int64_t ve = item_tiles_ * g_.c, me = item_tiles_ * g_.k;
    for (int64_t i = 0; i < count; ++i) {  // V
      const int64_t tile = t0 + i, image = tile / (th_ * tw_), r = tile / tw_ % th_, col = tile % tw_;
      const float* d[kXi];
      for (int64_t a = 0; a < 4; ++a) {
        const int64_t ih = 2 * r - g_.ph + a;
        for (int64_t b = 0; b < 4; ++b) {
          const int64_t iw = 2 * col - g_.pw + b;
          const bool inside = ih >= 0 && ih < g_.h && iw >= 0 && iw < g_.w;
          d[a * 4 + b] = inside ? x + ((image * g_.h + ih) * g_.w + iw) * g_.c : zeros_.data();
        }
      }
      input_transform(d, v + i * g_.c, ve, g_.c);
    }
    // M[e] = V[e] U[e] on the packed tiles: rows of V read in place, a strip's missing rows zeros
    const int pixels = shape_.pixels;
    const int64_t strips = (count + pixels - 1) / pixels, blocks = std::max<int64_t>(1, shape_.blocks());
    const int64_t nr = shape_.panel_width();
    for (int64_t e = 0; e < kXi; ++e) {
      for (int64_t i = 0; i < strips * pixels; ++i) table[i] = i < count ? v + e * ve + i * g_.c : zeros_.data();
      const float* u = packed_.data() + e * shape_.packed_size();
      for (int64_t b = 0; b < blocks; ++b) {
        const int64_t cn = shape_.blocks() ? shape_.block_channels(b) : 0;
        for (int64_t j = j0; j < j1; ++j) {
          const float* wp = u + (cn ? shape_.panel_offset(b, j) : 0);
          nhwc_dense_tile(shape_, table, b * shape_.block, cn, wp, m + e * me + j * nr, g_.k, count,
                          std::min(nr, g_.k - j * nr), b > 0, false, NhwcEpilogue{});
        }
      }
    }
    float* y = args.out(0);
    const float* bias = has_bias_ ? args.in(2) : nullptr;
    const float* z = residual_ ? args.in(3) : nullptr;
    for (int64_t i = 0; i < count; ++i) {  // Y
      const int64_t tile = t0 + i, image = tile / (th_ * tw_), r = tile / tw_ % th_, col = tile % tw_;
      float* out[4];
      const float* res[4];
      for (int64_t a = 0; a < 2; ++a) {
        for (int64_t b = 0; b < 2; ++b) {
          const int64_t oh = 2 * r + a, ow = 2 * col + b;
          const bool inside = oh < g_.oh && ow < g_.ow;
          const int64_t at = ((image * g_.oh + oh) * g_.ow + ow) * g_.k;
          out[a * 2 + b] = inside ? y + at : nullptr;
          res[a * 2 + b] = inside && z ? z + at : nullptr;
        }
      }
      for (int q = 0; q < 4; ++q) {  // this group's filters
        if (out[q]) out[q] += f0;
        if (res[q]) res[q] += f0;
      }
      output_transform(m + i * g_.k + f0, me, out, res, bias ? bias + f0 : nullptr, clamp_.clamp, clamp_.lo, clamp_.hi,
                       f1 - f0);
      if (act_.kind == ConvActivationKind::None || act_.kind == ConvActivationKind::Clip) continue;
      for (float* o : out) {
        if (o) apply_conv_activation(act_, o, f1 - f0);
      }
    }
  }

  NhwcConv g_;
  NhwcTileShape shape_;  // the products' tiles: K filters over C channels, one tap
  bool has_bias_, residual_;
  NhwcEpilogue clamp_;
  ConvActivation act_;
  std::vector<float> zeros_;
  int64_t th_ = 0, tw_ = 0, tiles_ = 0, item_tiles_ = 1, tile_items_ = 0, items_ = 0;
  int64_t filter_groups_ = 1;  // items per tile range: the filter panels split
  int workers_ = 1;
  std::vector<float> packed_;  // the 16 U[e], packed
};

}  // namespace

std::string why_not_winograd_nhwc(const NhwcConv& g, bool constant_filter) {
  if (!constant_filter) return "the filter is not a constant (U is made at plan time)";
  if (g.group != 1) return "grouped";
  if (g.r != 3 || g.s != 3) return "kernel is " + std::to_string(g.r) + "x" + std::to_string(g.s);
  if (g.sh != 1 || g.sw != 1 || g.dh != 1 || g.dw != 1) return "strided or dilated";
  if (g.k < 16 || g.c < 16) return "fewer than 16 filters or channels";
  if (((g.oh + 1) / 2) * ((g.ow + 1) / 2) < 16) return "fewer than 16 output tiles per image";
  return "";
}

WinogradNhwc make_winograd_nhwc(const NhwcConv& g, const float* w, bool has_bias, bool residual,
                                const NhwcEpilogue& clamp, const ConvActivation& act) {
  auto kernel = std::make_unique<WinogradNhwcKernel>(g, w, has_bias, residual, clamp, act);
  WinogradNhwc out;
  out.workers = kernel->workers();
  out.workspace_bytes = kernel->workspace_bytes();
  out.kernel = std::move(kernel);
  return out;
}

}  // namespace dnnx
