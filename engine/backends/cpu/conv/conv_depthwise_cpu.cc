// Note [direct depthwise conv]
// A depthwise conv (group == C: each output channel reads one input channel, [M, 1, KH, KW]
// filters) went through im2col+gemm one group at a time: per channel an im2col of one plane and
// a [1 x K] x [K x OH*OW] OpenBLAS call, a GEMM of one row, whose call and packing overheads
// dwarf its 9 to 49 multiply-adds per output. MobileNetV2 took 2.3x onnxruntime's time at batch
// 1 on 1 thread, EfficientNet-B0 3.4x (issue #38), onnxruntime's MLAS having direct depthwise
// kernels. Here each input plane (n, c) is summed straight into its `multiplier` output planes:
//   y[oh, ow] = sum over kh, kw (in that order) of w[kh, kw] * xpad[oh*SH + kh*DH, ow*SW + kw*DW]
// - Phases: the padded plane is copied into SH x SW phase planes P[pr][pc][r][j] =
//   xpad[r*SH + pr, j*SW + pc], each [HQ, WQ], zeros where xpad is padding. Tap (kh, kw) of output
//   (oh, ow) is then P[(kh*DH) % SH][(kw*DW) % SW][oh + kh*DH / SH][ow + kw*DW / SW]: at a fixed
//   offset from q = oh*WQ + ow in one flat buffer, whatever the strides, pads and dilations. An
//   unpadded unit-stride conv reads X itself (WQ = W).
// - So one loop over q in [0, (OH-1)*WQ + OW) sums every tap at its offset, in tap order
//   (tap_sum_avx512 or tap_sum_avx2: 64 or 32 outputs at a time in four vector accumulators of
//   fused multiply-adds, the same bits either way, picked once per process by the CPU; else a
//   portable loop). The multiply-adds are the bound, not the loads: loading each input vector
//   once for two output rows (which share KH of their KH + 1 input rows) was tried with AVX2 and
//   gained nothing, while 16 lanes instead of 8 roughly halve the time (onnxruntime's MLAS uses
//   AVX-512 where the CPU has it). Small planes (14x14, 7x7) stay behind onnxruntime, whose
//   NCHWc layout puts 16 channels in a vector: per plane, the setup, padded copy and row stores
//   cost more than the multiply-adds (MobileNetV2's 960 x 7x7 layer 0.18 ms against 0.035).
//   Interleaving 16 channels' planes with scalar copies to sum them 16 at a time was tried and
//   was slower (the 384 x 14x14 layer 0.41 ms against 0.13): it needs vectorized transposes. The
//   WQ - OW columns past each row's end are computed and dropped: a 14x14 plane is one loop of
//   222 outputs, not 14 loops of 14.
// - Then each output row is stored with the epilogue (bias, residual, Relu: conv_epilogue_cpu.h's
//   order).
// Threads take whole input planes, and every output is computed by the same operations in the
// same order on any thread, so results do not depend on the thread count (Note [cpu threads]).
#include "backends/cpu/conv/conv_depthwise_cpu.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/cpu/conv/conv_activation_cpu.h"
#include "backends/cpu/conv/conv_epilogue_cpu.h"
#include "backends/cpu/runtime/thread_pool.h"
#include "backends/cpu/runtime/cpu_features.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DNNX_DEPTHWISE_AVX2 1
#endif

namespace dnnx {

namespace {

enum Dim { kD = 0, kH = 1, kW = 2 };

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define DNNX_DEPTHWISE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define DNNX_DEPTHWISE_CLONES
#endif

// out[i] = sum over t in [0, taps) (in order) of w[t] * src[i + off[t]], for i in [0, n).
using TapSumFn = void (*)(const float* src, const int64_t* off, const float* w, int64_t taps, int64_t n,
                          float* out);

// The portable loop (the compiler vectorizes over i where it can), unfused multiply and add.
void tap_sum_generic(const float* src, const int64_t* off, const float* w, int64_t taps, int64_t n, float* out) {
  constexpr int64_t kBlock = 16;
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    float acc[kBlock] = {};
    for (int64_t t = 0; t < taps; ++t) {
      const float* p = src + i + off[t];
      const float wt = w[t];
      for (int64_t j = 0; j < kBlock; ++j) acc[j] += p[j] * wt;
    }
    std::memcpy(out + i, acc, sizeof acc);
  }
  for (; i < n; ++i) {
    float a = 0.0f;
    for (int64_t t = 0; t < taps; ++t) a += src[i + off[t]] * w[t];
    out[i] = a;
  }
}

#ifdef DNNX_DEPTHWISE_AVX2
// AVX2 and FMA: 32 outputs at a time in four accumulators (the FMA latency hidden), the last
// ones under masks; every output's sum is the same chain of fused multiply-adds in tap order.
__attribute__((target("avx2,fma"))) void tap_sum_avx2(const float* src, const int64_t* off, const float* w,
                                                      int64_t taps, int64_t n, float* out) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    for (int64_t t = 0; t < taps; ++t) {
      const float* p = src + i + off[t];
      const __m256 wt = _mm256_set1_ps(w[t]);
      a0 = _mm256_fmadd_ps(_mm256_loadu_ps(p), wt, a0);
      a1 = _mm256_fmadd_ps(_mm256_loadu_ps(p + 8), wt, a1);
      a2 = _mm256_fmadd_ps(_mm256_loadu_ps(p + 16), wt, a2);
      a3 = _mm256_fmadd_ps(_mm256_loadu_ps(p + 24), wt, a3);
    }
    _mm256_storeu_ps(out + i, a0);
    _mm256_storeu_ps(out + i + 8, a1);
    _mm256_storeu_ps(out + i + 16, a2);
    _mm256_storeu_ps(out + i + 24, a3);
  }
  if (i == n) return;
  // The last n - i < 32 outputs: the same four accumulators under masks (a masked load reads
  // nothing past the plane, a masked store writes nothing past out's end).
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const int left = static_cast<int>(n - i);
  const __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(left), lane);
  const __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(left - 8), lane);
  const __m256i m2 = _mm256_cmpgt_epi32(_mm256_set1_epi32(left - 16), lane);
  const __m256i m3 = _mm256_cmpgt_epi32(_mm256_set1_epi32(left - 24), lane);
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
  for (int64_t t = 0; t < taps; ++t) {
    const float* p = src + i + off[t];
    const __m256 wt = _mm256_set1_ps(w[t]);
    a0 = _mm256_fmadd_ps(_mm256_maskload_ps(p, m0), wt, a0);
    a1 = _mm256_fmadd_ps(_mm256_maskload_ps(p + 8, m1), wt, a1);
    a2 = _mm256_fmadd_ps(_mm256_maskload_ps(p + 16, m2), wt, a2);
    a3 = _mm256_fmadd_ps(_mm256_maskload_ps(p + 24, m3), wt, a3);
  }
  _mm256_maskstore_ps(out + i, m0, a0);
  _mm256_maskstore_ps(out + i + 8, m1, a1);
  _mm256_maskstore_ps(out + i + 16, m2, a2);
  _mm256_maskstore_ps(out + i + 24, m3, a3);
}

// Row pairs (unit vertical stride and dilation): output rows oh and oh + 1 share KH of their
// KH + 1 input rows, so each input vector is loaded once for both (tap (kh, kw) of row oh + 1
// is tap (kh + 1, kw) of row oh): (KH + 1) / 2KH loads per multiply-add instead of one. Rows
// [0, out_h) of out (row stride wq, out_w wide) = tap_sum's sums, in the same fused chain per
// output (taps in order), so the same bits. coff: the column offset of each kw; w [KH, KW].
// AVX-512: the same loop 16 lanes wide, 64 outputs at a time, the last ones under a mask. Each
// output's sum is the same chain of fused multiply-adds as in tap_sum_avx2, so the two give the
// same bits.
__attribute__((target("avx512f"))) void tap_sum_avx512(const float* src, const int64_t* off, const float* w,
                                                       int64_t taps, int64_t n, float* out) {
  for (int64_t i = 0; i < n; i += 64) {
    const int64_t left = std::min<int64_t>(64, n - i);
    __mmask16 m[4];
    for (int j = 0; j < 4; ++j) {
      const int64_t lanes = std::max<int64_t>(0, std::min<int64_t>(16, left - 16 * j));
      m[j] = static_cast<__mmask16>((1u << lanes) - 1u);
    }
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
    if (left == 64) {
      for (int64_t t = 0; t < taps; ++t) {
        const float* p = src + i + off[t];
        const __m512 wt = _mm512_set1_ps(w[t]);
        a0 = _mm512_fmadd_ps(_mm512_loadu_ps(p), wt, a0);
        a1 = _mm512_fmadd_ps(_mm512_loadu_ps(p + 16), wt, a1);
        a2 = _mm512_fmadd_ps(_mm512_loadu_ps(p + 32), wt, a2);
        a3 = _mm512_fmadd_ps(_mm512_loadu_ps(p + 48), wt, a3);
      }
    } else {
      for (int64_t t = 0; t < taps; ++t) {
        const float* p = src + i + off[t];
        const __m512 wt = _mm512_set1_ps(w[t]);
        a0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m[0], p), wt, a0);
        a1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m[1], p + 16), wt, a1);
        a2 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m[2], p + 32), wt, a2);
        a3 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m[3], p + 48), wt, a3);
      }
    }
    _mm512_mask_storeu_ps(out + i, m[0], a0);
    _mm512_mask_storeu_ps(out + i + 16, m[1], a1);
    _mm512_mask_storeu_ps(out + i + 32, m[2], a2);
    _mm512_mask_storeu_ps(out + i + 48, m[3], a3);
  }
}
#endif

// tap_sum_avx512 where the CPU has AVX-512, tap_sum_avx2 where it has AVX2 and FMA (picked once
// per process: the same loop for every thread and run), else the portable loop.
TapSumFn pick_tap_sum() {
#ifdef DNNX_DEPTHWISE_AVX2
  static const TapSumFn fn = cpu_has_avx512f() ? tap_sum_avx512 : cpu_has_avx2_fma() ? tap_sum_avx2 : tap_sum_generic;
  return fn;
#endif
  return tap_sum_generic;
}

// y[0, n) = relu?((r + b) + z), conv_epilogue_cpu.h's order; b and z where present.
DNNX_DEPTHWISE_CLONES void store_row(const float* r, const float* bias, const float* z, bool relu, float* y,
                                     int64_t n) {
  const float b = bias ? *bias : 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    float v = bias ? r[i] + b : r[i];
    if (z) v += z[i];
    y[i] = relu ? (v < 0.0f ? 0.0f : v) : v;  // NaN passes through
  }
}

// d[j] = src[j * stride] for j in [0, n).
DNNX_DEPTHWISE_CLONES void gather_strided_row(const float* src, int64_t stride, int64_t n, float* d) {
  if (stride == 2) {
    for (int64_t j = 0; j < n; ++j) d[j] = src[2 * j];
  } else {
    for (int64_t j = 0; j < n; ++j) d[j] = src[j * stride];
  }
}

// The phase planes of Note [direct depthwise conv].
struct Phases {
  bool copied = false;  // false: an unpadded unit-stride conv reads X itself
  int64_t sh = 1, sw = 1, hq = 0, wq = 0;
  int64_t plane() const { return hq * wq; }
  int64_t floats() const { return copied ? sh * sw * plane() : 0; }
};

Phases phases_of(const ConvGeometry& g) {
  Phases p;
  p.sh = g.strides[kH];
  p.sw = g.strides[kW];
  p.copied = g.has_padding() || p.sh != 1 || p.sw != 1;
  if (!p.copied) {
    p.hq = g.input[kH];
    p.wq = g.input[kW];
    return p;
  }
  // Every tap of every output inside: index oh + kh*DH/SH < HQ, and likewise along W; and the
  // whole input inside too (pads_end may reach past the last window).
  const int64_t rows = std::max(g.pads_begin[kH] + g.input[kH], (g.output[kH] - 1) * p.sh + g.effective_kernel(kH));
  const int64_t cols = std::max(g.pads_begin[kW] + g.input[kW], (g.output[kW] - 1) * p.sw + g.effective_kernel(kW));
  p.hq = (rows + p.sh - 1) / p.sh;
  p.wq = (cols + p.sw - 1) / p.sw;
  return p;
}

class DepthwiseConv final : public Kernel {
 public:
  DepthwiseConv(const ConvShape& s, bool has_bias, bool relu, bool residual, int workers, ConvActivation act)
      : s_(s), ph_(phases_of(s.g)), tap_sum_(pick_tap_sum()), has_bias_(has_bias), relu_(relu), residual_(residual),
        act_(act), workers_(workers) {
    const ConvGeometry& g = s_.g;
    for (int64_t kh = 0; kh < g.kernel[kH]; ++kh) {
      for (int64_t kw = 0; kw < g.kernel[kW]; ++kw) {
        const int64_t r = kh * g.dilations[kH], c = kw * g.dilations[kW];
        const int64_t phase = (r % ph_.sh) * ph_.sw + c % ph_.sw;
        offsets_.push_back(phase * ph_.plane() + (r / ph_.sh) * ph_.wq + c / ph_.sw);
      }
    }
  }

  // Per worker: the phase planes, then the flat output [(OH-1)*WQ + OW].
  static int64_t worker_floats(const ConvShape& s) {
    const Phases p = phases_of(s.g);
    return p.floats() + s.g.output[kH] * p.wq;
  }

  void run(const KernelArgs& args) const override {
    float* scratch = static_cast<float*>(args.workspace);
    const int64_t per_worker = worker_floats(s_);
    cpu_thread_pool().parallel_for(s_.batch * s_.channels, [&](int64_t begin, int64_t end, int worker) {
      for (int64_t item = begin; item < end; ++item) {
        run_plane(args, item / s_.channels, item % s_.channels, scratch + worker * per_worker);
      }
    }, workers_);
  }

 private:
  // Input plane (n, c) into its `multiplier` output channels.
  void run_plane(const KernelArgs& args, int64_t n, int64_t c, float* scratch) const {
    const ConvGeometry& g = s_.g;
    const int64_t out_h = g.output[kH], out_w = g.output[kW], taps = g.kernel_size();
    const float* x = args.in(0) + (n * s_.channels + c) * g.input_size();
    const float* src = x;
    if (ph_.copied) {
      fill_phases(x, scratch);
      src = scratch;
    }
    float* flat = scratch + ph_.floats();
    const int64_t flat_n = (out_h - 1) * ph_.wq + out_w;
    const int64_t mult = s_.group_filters();
    for (int64_t m = 0; m < mult; ++m) {
      const int64_t oc = c * mult + m;
      const int64_t y_offset = (n * s_.filters + oc) * out_h * out_w;
      const float* w = args.in(1) + oc * taps;
      tap_sum_(src, offsets_.data(), w, taps, flat_n, flat);
      float* y = args.out(0) + y_offset;
      const float* bias = has_bias_ ? args.in(2) + oc : nullptr;
      const float* z = residual_ ? args.in(3) + y_offset : nullptr;
      for (int64_t oh = 0; oh < out_h; ++oh) {
        store_row(flat + oh * ph_.wq, bias, z ? z + oh * out_w : nullptr, relu_, y + oh * out_w, out_w);
      }
      apply_conv_activation(act_, y, out_h * out_w);  // the plane just stored (Note [conv activation epilogue])
    }
  }

  // The phase planes of x [H, W] (Note [direct depthwise conv]), zeros where xpad is padding.
  void fill_phases(const float* x, float* planes) const {
    const ConvGeometry& g = s_.g;
    const int64_t in_h = g.input[kH], in_w = g.input[kW], top = g.pads_begin[kH], left = g.pads_begin[kW];
    const int64_t sh = ph_.sh, sw = ph_.sw, wq = ph_.wq, plane = ph_.plane();
    for (int64_t row = 0; row < ph_.hq * sh; ++row) {
      const int64_t h = row - top;
      float* dst = planes + (row % sh) * sw * plane + (row / sh) * wq;  // phase (row % sh, 0)
      if (h < 0 || h >= in_h) {
        for (int64_t pc = 0; pc < sw; ++pc) std::fill(dst + pc * plane, dst + pc * plane + wq, 0.0f);
        continue;
      }
      const float* src = x + h * in_w;
      if (sw == 1) {
        std::fill(dst, dst + left, 0.0f);
        std::memcpy(dst + left, src, static_cast<size_t>(in_w) * sizeof(float));
        std::fill(dst + left + in_w, dst + wq, 0.0f);
        continue;
      }
      for (int64_t pc = 0; pc < sw; ++pc) {
        // Column j of phase pc is xpad column j*sw + pc, input column j*sw + pc - left:
        // inside for j in [lo, hi).
        float* d = dst + pc * plane;
        const int64_t lo = std::min(wq, std::max<int64_t>(0, (left - pc + sw - 1) / sw));
        const int64_t hi = std::max(lo, std::min(wq, (in_w + left - pc + sw - 1) / sw));
        std::fill(d, d + lo, 0.0f);
        gather_strided_row(src + lo * sw + pc - left, sw, hi - lo, d + lo);
        std::fill(d + hi, d + wq, 0.0f);
      }
    }
  }

  ConvShape s_;
  Phases ph_;
  TapSumFn tap_sum_;
  std::vector<int64_t> offsets_;  // per tap (kh, kw): its offset from q in the planes
  bool has_bias_, relu_, residual_;
  ConvActivation act_;
  int workers_;
};

}  // namespace

std::string why_not_depthwise_conv(const ConvShape& s) {
  const ConvGeometry& g = s.g;
  if (g.group == 1 || s.group_channels() != 1) return "not depthwise (" + std::to_string(s.group_channels()) +
                                                       " channels per group)";
  if (g.kernel[kD] != 1 || g.input[kD] != 1 || g.output[kD] != 1) return "a 3-D window";
  return "";
}

int depthwise_conv_workers(const ConvShape& s) {
  const ConvGeometry& g = s.g;
  return plan_workers(s.batch * s.channels, s.group_filters() * g.output_size() * g.kernel_size());
}

size_t depthwise_conv_workspace_bytes(const ConvShape& s, int workers) {
  return static_cast<size_t>(workers * DepthwiseConv::worker_floats(s)) * sizeof(float);
}

std::unique_ptr<Kernel> make_depthwise_conv(const ConvShape& s, bool has_bias, bool relu, bool residual, int workers,
                                            const ConvActivation& act) {
  return std::make_unique<DepthwiseConv>(s, has_bias, relu, residual, workers, act);
}

}  // namespace dnnx
