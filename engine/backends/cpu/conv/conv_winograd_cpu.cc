// Note [winograd conv]
// ResNet-50's 3x3 unit-stride convs (13 of its 16 3x3 layers) took 4.1-5.4 ms each through
// im2col and OpenBLAS at batch 1 on 1 thread on this project's 2-core CI machine (AMD EPYC,
// AVX2, ~78 GFLOP/s peak at its 2.45 GHz), against onnxruntime's 2.7-2.9 ms (MLAS NCHWc, near
// the peak): a direct GEMM cannot catch up on FLOPs. Winograd's F(2x2, 3x3) computes each 2x2
// output tile from a 4x4 input tile with 16 multiplications per (filter, channel) instead of 36:
//   U = G g G^T    (each 3x3 filter g -> 4x4; every call: the weights may be fine-tuned)
//   V = B^T d B    (each 4x4 input tile d, tiles overlapping by 2)
//   M = U . V      (16 independent GEMMs, one per element xi of the 4x4: M[xi] [M, T] =
//                   U[xi] [M, C] x V[xi] [C, T], T the image's tiles: one OpenBLAS sgemm each)
//   Y = A^T M A    (each tile -> 2x2, the epilogue (bias, residual, Relu) applied as it is stored)
// with B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1],
// A^T = [1 1 1 0; 0 1 -1 -1]. The transforms' coefficients are 0, +-1 and +-0.5, so the
// rounding stays close to the direct sum's (errors against onnxruntime ~1e-6 relative on
// ResNet's layers; tests/test_conv_winograd.py). Each channel's input plane is first copied into
// a zero-padded scratch of (2 TH + 2) x (2 TW + 2) (TH x TW tiles) so that the transform reads no
// bounds. Every output is computed by the same operations in the same order whatever the
// threads (the GEMM's blocking follows its shape; the transforms are per element), so results
// do not depend on the thread count. At batch 1 each stage splits across the pool (channels,
// GEMM tasks, filters); at larger batches the images do.
#include "backends/cpu/conv/conv_winograd_cpu.h"

#include <algorithm>
#include <cstring>

#include "backends/cpu/dense/blas.h"
#include "backends/cpu/runtime/thread_pool.h"

namespace dnnx {

namespace {

enum Dim { kD = 0, kH = 1, kW = 2 };
constexpr int64_t kXi = 16;  // elements of a 4x4 tile
constexpr int64_t kMaxRow = 1024;
constexpr int64_t kMinTiles = 36;  // 2x2 output tiles: a 12x12 output  // the widest padded input row taken (a stack buffer's floats)

// The floats between two xi planes of U, V or M holding `n`: n rounded up to a cache line, and
// one more line, so that the 16 planes a transform reads or writes side by side never start at
// the same offset in a 4 KB page. (Planes of 64 x 784 or 512 x 512 floats are whole pages: 16
// streams then fight over one L1 set of 8 ways, and the transforms ran 5-10x slower.)
int64_t plane_stride(int64_t n) { return (n + 15) / 16 * 16 + 16; }

struct Tiles {
  int64_t th, tw;  // tile rows and columns: ceil(OH / 2), ceil(OW / 2)
  int64_t hp, wp;  // the padded scratch: 2 * th + 2, 2 * tw + 2
  int64_t u, v, m;  // xi plane strides of U [M, C], V [C, T] and M [M, T]
  int64_t count() const { return th * tw; }
};

Tiles tiles_of(const ConvShape& s) {
  const ConvGeometry& g = s.g;
  Tiles t;
  t.th = (g.output[kH] + 1) / 2;
  t.tw = (g.output[kW] + 1) / 2;
  t.hp = 2 * t.th + 2;
  t.wp = 2 * t.tw + 2;
  t.u = plane_stride(s.filters * s.channels);
  t.v = plane_stride(s.channels * t.count());
  t.m = plane_stride(s.filters * t.count());
  return t;
}

// Vectorizing clones of the transforms (GCC picks one at load time by the CPU): the loops below
// run over consecutive channels, tiles or outputs, so AVX2 does 8 at a time. No FMA: the clone
// must compute what the default one does.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define DNNX_WINOGRAD_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define DNNX_WINOGRAD_CLONES
#endif

// One filter row: g = w [C, 3, 3] (filter m's channels) -> u[xi * plane + c] = (G g G^T)[xi],
// the loop over c innermost (the 16 stores of a channel go to 16 planes, consecutive in c).
DNNX_WINOGRAD_CLONES void transform_filter_row(const float* w, int64_t channels, int64_t plane, float* u) {
  for (int64_t c = 0; c < channels; ++c) {
    const float* g = w + c * 9;
    float gg[4][3];  // G g: rows of g combined
    for (int j = 0; j < 3; ++j) {
      const float g0 = g[j], g1 = g[3 + j], g2 = g[6 + j];
      gg[0][j] = g0;
      gg[1][j] = 0.5f * (g0 + g1 + g2);
      gg[2][j] = 0.5f * (g0 - g1 + g2);
      gg[3][j] = g2;
    }
    for (int i = 0; i < 4; ++i) {  // (G g) G^T: columns combined
      const float h0 = gg[i][0], h1 = gg[i][1], h2 = gg[i][2];
      u[(4 * i + 0) * plane + c] = h0;
      u[(4 * i + 1) * plane + c] = 0.5f * (h0 + h1 + h2);
      u[(4 * i + 2) * plane + c] = 0.5f * (h0 - h1 + h2);
      u[(4 * i + 3) * plane + c] = h2;
    }
  }
}

class WinogradConv final : public Kernel {
 public:
  WinogradConv(const ConvShape& s, bool has_bias, bool relu, bool residual, int workers, ConvActivation act)
      : s_(s), t_(tiles_of(s)), has_bias_(has_bias),
        relu_(relu), residual_(residual), act_(act), workers_(workers) {}

  // Workspace: U [16, M, C], then per worker V [16, C, T], M [16, M, T], and the padded scratch
  // of each channel being transformed (one per thread of the pool: the channel stage splits).
  static size_t floats(const ConvShape& s, int workers) {
    const Tiles t = tiles_of(s);
    return static_cast<size_t>(kXi * t.u + workers * kXi * (t.v + t.m));
  }

  void run(const KernelArgs& args) const override {
    float* ws = static_cast<float*>(args.workspace);
    float* u = ws;
    transform_filters(args.in(1), u);
    float* per_worker = u + kXi * t_.u;
    const int64_t worker_floats = kXi * (t_.v + t_.m);
    cpu_thread_pool().parallel_for(s_.batch, [&](int64_t begin, int64_t end, int worker) {
      float* v = per_worker + worker * worker_floats;
      float* m = v + kXi * t_.v;
      for (int64_t n = begin; n < end; ++n) run_image(args, n, u, v, m);
    }, workers_);
  }

 private:
  // U[xi][m][c] (plane stride t_.u) = (G g G^T)[xi] for every filter g = w[m, c]; the filters
  // split across the pool.
  void transform_filters(const float* w, float* u) const {
    cpu_thread_pool().parallel_for(s_.filters, [&](int64_t begin, int64_t end, int) {
      for (int64_t m = begin; m < end; ++m) transform_filter_row(w + m * s_.channels * 9, s_.channels, t_.u, u + m * s_.channels);
    });
  }

  void run_image(const KernelArgs& args, int64_t n, const float* u, float* v, float* m) const {
    const ConvGeometry& g = s_.g;
    const int64_t tiles = t_.count();
    const float* x = args.in(0) + n * s_.channels * g.input_size();
    // 1. V: the channels split across the pool, each into its thread's padded scratch.
    cpu_thread_pool().parallel_for(s_.channels, [&](int64_t begin, int64_t end, int) {
      thread_local std::vector<float> scratch;
      scratch.resize(static_cast<size_t>(2 * t_.hp * (t_.tw + 1)));
      for (int64_t c = begin; c < end; ++c) {
        pad_plane(x + c * g.input_size(), scratch.data());
        transform_input(scratch.data(), v + c * tiles);
      }
    });
    // 2. The 16 GEMMs, each one call on one thread whatever the thread count.
    const int mf = static_cast<int>(s_.filters), nt = static_cast<int>(tiles), kc = static_cast<int>(s_.channels);
    cpu_thread_pool().parallel_for(kXi, [&](int64_t begin, int64_t end, int) {
      for (int64_t xi = begin; xi < end; ++xi) {
        sgemm_serial(false, false, mf, nt, kc, 1.0f, u + xi * t_.u, kc, v + xi * t_.v, nt, 0.0f, m + xi * t_.m, nt);
      }
    });
    // 3. Y with the epilogue, the filters split across the pool.
    const int64_t out_size = g.output_size();
    float* y = args.out(0) + n * s_.filters * out_size;
    const float* bias = has_bias_ ? args.in(2) : nullptr;
    const float* z = residual_ ? args.in(3) + n * s_.filters * out_size : nullptr;
    cpu_thread_pool().parallel_for(s_.filters, [&](int64_t begin, int64_t end, int) {
      for (int64_t f = begin; f < end; ++f) {
        transform_output(m + f * tiles, bias ? bias[f] : 0.0f, z ? z + f * out_size : nullptr, y + f * out_size);
        apply_conv_activation(act_, y + f * out_size, out_size);  // Note [conv activation epilogue]
      }
    });
  }

  // The channel's plane [H, W], zero-padded to [hp, wp] with the input at (pad top, pad left),
  // into the scratch split by column parity: even [hp, tw + 1] = columns 0, 2, .., then odd
  // [hp, tw + 1] = columns 1, 3, ..: a tile's 4 columns are even[tx], odd[tx], even[tx + 1],
  // odd[tx + 1], so the transform over tx loads consecutive floats (and vectorizes).
  DNNX_WINOGRAD_CLONES void pad_plane(const float* xc, float* scratch) const {
    const ConvGeometry& g = s_.g;
    const int64_t in_h = g.input[kH], in_w = g.input[kW];
    const int64_t top = g.pads_begin[kH], left = g.pads_begin[kW];
    const int64_t half = t_.tw + 1;
    const int64_t lo = std::max<int64_t>(0, left), hi = std::min(t_.wp, left + in_w);  // scratch columns with input
    float row[kMaxRow];
    float* even = scratch;
    float* odd = scratch + t_.hp * half;
    for (int64_t r = 0; r < t_.hp; ++r, even += half, odd += half) {
      const int64_t ih = r - top;
      if (ih < 0 || ih >= in_h || lo >= hi) {
        std::fill(even, even + half, 0.0f);
        std::fill(odd, odd + half, 0.0f);
        continue;
      }
      std::fill(row, row + lo, 0.0f);
      std::memcpy(row + lo, xc + ih * in_w + (lo - left), static_cast<size_t>(hi - lo) * sizeof(float));
      std::fill(row + hi, row + t_.wp, 0.0f);
      for (int64_t k = 0; k < half; ++k) {
        even[k] = row[2 * k];
        odd[k] = row[2 * k + 1];
      }
    }
  }

  // v[xi * t_.v + t] = (B^T d B)[xi] for each tile t = (ty, tx) of the split scratch.
  DNNX_WINOGRAD_CLONES void transform_input(const float* scratch, float* v) const {
    const int64_t stride = t_.v;  // between xi planes
    const int64_t tw = t_.tw, half = t_.tw + 1;
    const float* even = scratch;
    const float* odd = scratch + t_.hp * half;
    for (int64_t ty = 0; ty < t_.th; ++ty) {
      const float* e[4];
      const float* o[4];
      for (int i = 0; i < 4; ++i) {
        e[i] = even + (2 * ty + i) * half;
        o[i] = odd + (2 * ty + i) * half;
      }
      float* out = v + ty * tw;
      for (int64_t tx = 0; tx < tw; ++tx) {
        // B^T d: the rows combined, per column j (d[i][j]: row i's column 2 tx + j).
        float w[4][4];
        for (int j = 0; j < 4; ++j) {
          const int64_t k = tx + j / 2;
          const float d0 = j % 2 ? o[0][k] : e[0][k], d1 = j % 2 ? o[1][k] : e[1][k];
          const float d2 = j % 2 ? o[2][k] : e[2][k], d3 = j % 2 ? o[3][k] : e[3][k];
          w[0][j] = d0 - d2;
          w[1][j] = d1 + d2;
          w[2][j] = d2 - d1;
          w[3][j] = d1 - d3;
        }
        // (B^T d) B: the columns combined.
        for (int i = 0; i < 4; ++i) {
          out[(4 * i + 0) * stride + tx] = w[i][0] - w[i][2];
          out[(4 * i + 1) * stride + tx] = w[i][1] + w[i][2];
          out[(4 * i + 2) * stride + tx] = w[i][2] - w[i][1];
          out[(4 * i + 3) * stride + tx] = w[i][1] - w[i][3];
        }
      }
    }
  }

  // One filter's output plane y [OH, OW] = epilogue(A^T M A) from its tiles' 16 GEMM results
  // mf[xi * t_.m + t]; z (the residual) laid out as y, or null. Per row of tiles: the 2x2 outputs
  // over tx into two rows of 2 tw (vectorized over tx), then the epilogue over each row's OW.
  DNNX_WINOGRAD_CLONES void transform_output(const float* mf, float bias, const float* z, float* y) const {
    const ConvGeometry& g = s_.g;
    const int64_t out_h = g.output[kH], out_w = g.output[kW];
    const int64_t stride = t_.m;
    const int64_t tw = t_.tw;
    float rows[2][kMaxRow];
    for (int64_t ty = 0; ty < t_.th; ++ty) {
      const float* in = mf + ty * tw;
      for (int64_t tx = 0; tx < tw; ++tx) {
        float q[2][4];  // A^T M: the rows combined, per column j
        for (int j = 0; j < 4; ++j) {
          const float m0 = in[(0 + j) * stride + tx], m1 = in[(4 + j) * stride + tx];
          const float m2 = in[(8 + j) * stride + tx], m3 = in[(12 + j) * stride + tx];
          q[0][j] = m0 + m1 + m2;
          q[1][j] = m1 - m2 - m3;
        }
        for (int i = 0; i < 2; ++i) {  // (A^T M) A: the columns combined
          rows[i][2 * tx] = q[i][0] + q[i][1] + q[i][2];
          rows[i][2 * tx + 1] = q[i][1] - q[i][2] - q[i][3];
        }
      }
      for (int i = 0; i < 2 && 2 * ty + i < out_h; ++i) {
        const int64_t at = (2 * ty + i) * out_w;
        store_row(rows[i], bias, z ? z + at : nullptr, y + at, out_w);
      }
    }
  }

  // y[0, w) = epilogue(r): apply_conv_epilogue's order, (sum + b) + z, then Relu.
  DNNX_WINOGRAD_CLONES void store_row(const float* r, float bias, const float* z, float* y, int64_t w) const {
    const float b = has_bias_ ? bias : 0.0f;
    if (z) {
      for (int64_t i = 0; i < w; ++i) {
        const float val = (r[i] + b) + z[i];
        y[i] = relu_ ? (val < 0.0f ? 0.0f : val) : val;  // NaN passes through
      }
    } else {
      for (int64_t i = 0; i < w; ++i) {
        const float val = has_bias_ ? r[i] + b : r[i];
        y[i] = relu_ ? (val < 0.0f ? 0.0f : val) : val;
      }
    }
  }

  ConvShape s_;
  Tiles t_;
  bool has_bias_, relu_, residual_;
  ConvActivation act_;
  int workers_;
};

}  // namespace

std::string why_not_winograd_conv(const ConvShape& s) {
  const ConvGeometry& g = s.g;
  if (g.group != 1) return "grouped";
  if (g.kernel[kD] != 1 || g.kernel[kH] != 3 || g.kernel[kW] != 3) return "kernel is " + g.kernel_str();
  if (g.input[kD] != 1 || g.output[kD] != 1) return "not 2-D";
  for (size_t d = 0; d < g.rank(); ++d) {
    if (g.strides[d] != 1) return "strides are " + shape_str(g.strides);
    if (g.dilations[d] != 1) return "dilations are " + shape_str(g.dilations);
  }
  // The transforms cost per tile and channel; the GEMMs save 20 of 36 multiplications per
  // output only with enough filters and channels to amortise them.
  if (s.filters < 16 || s.channels < 16) return "fewer than 16 filters or channels";
  // Few tiles make narrow GEMMs ([512 x 512] x [512 x 16] for ResNet's 7x7 layers: OpenBLAS
  // took 9 ms for the 16 of them where im2col+gemm takes 5 for the layer).
  const int64_t tiles = ((g.output[kH] + 1) / 2) * ((g.output[kW] + 1) / 2);
  if (tiles < kMinTiles) return "fewer than " + std::to_string(kMinTiles) + " output tiles";
  if (2 * ((g.output[kW] + 1) / 2) + 2 > kMaxRow) return "rows wider than " + std::to_string(kMaxRow - 2);
  return "";
}

size_t winograd_conv_workspace_bytes(const ConvShape& s, int workers) {
  return WinogradConv::floats(s, workers) * sizeof(float);
}

std::unique_ptr<Kernel> make_winograd_conv(const ConvShape& s, bool has_bias, bool relu, bool residual, int workers,
                                           const ConvActivation& act) {
  return std::make_unique<WinogradConv>(s, has_bias, relu, residual, workers, act);
}

}  // namespace dnnx
