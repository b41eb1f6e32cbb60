// Note [direct depthwise conv]
// A depthwise conv (group == C: each output channel reads one input channel, [M, 1, KH, KW]
// filters) went through im2col+gemm one group at a time: per channel an im2col of one plane and
// a [1 x K] x [K x OH*OW] OpenBLAS call, a GEMM of one row, whose call and packing overheads
// dwarf its 9 to 49 multiply-adds per output. MobileNetV2 took 2.3x onnxruntime's time at batch
// 1 on 1 thread, EfficientNet-B0 3.4x (issue #38), onnxruntime's MLAS having direct depthwise
// kernels. Here each input plane (n, c) is, when the conv is padded, first copied into a
// zero-bordered scratch plane (so no tap tests a bound), then every output row of its
// `multiplier` output channels is summed tap row by tap row:
//   y[oh, ow] = sum over kh, kw (in that order) of w[kh, kw] * xp[oh*SH + kh*DH, ow*SW + kw*DW]
// with the loop over ow innermost: consecutive outputs read consecutive (stride 1) or every
// other (stride 2) input, which the compiler vectorizes (AVX2 clones, 8 outputs at a time;
// target_clones without FMA, like the Winograd transforms: both clones compute the same bits).
// The kernel width and stride are template constants for 1x1 to 7x7 windows and strides 1 and 2,
// so the kw taps unroll; other shapes take the same loop with runtime ones. The epilogue (bias,
// residual, Relu: conv_epilogue_cpu.h's order) is applied to each row as it is finished.
// Threads take whole input planes, and every output is computed by the same operations in the
// same order on any thread, so results do not depend on the thread count (Note [cpu threads]).
#include "backends/cpu/conv/conv_depthwise_cpu.h"

#include <algorithm>
#include <cstring>

#include "backends/cpu/conv/conv_epilogue_cpu.h"
#include "backends/cpu/runtime/thread_pool.h"

namespace dnnx {

namespace {

enum Dim { kD = 0, kH = 1, kW = 2 };

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define DNNX_DEPTHWISE_CLONES __attribute__((target_clones("avx2", "default")))
#define DNNX_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define DNNX_DEPTHWISE_CLONES
#define DNNX_ALWAYS_INLINE inline
#endif

// y[0, ow) += sum over kw of w[kw] * r[ow*S + kw*DW], the taps added in kw order. KW and S are
// template constants (0: take kw_rt, s_rt), so the tap loop unrolls and the ow loop vectorizes.
template <int KW, int S>
DNNX_ALWAYS_INLINE void add_tap_row(const float* r, const float* w, int64_t kw_rt, int64_t s_rt, int64_t dw,
                                    int64_t ow_count, float* y) {
  const int64_t kws = KW > 0 ? KW : kw_rt;
  const int64_t s = S > 0 ? S : s_rt;
  if (KW > 0 && dw == 1) {
    for (int64_t ow = 0; ow < ow_count; ++ow) {
      float acc = y[ow];
      for (int64_t kw = 0; kw < kws; ++kw) acc += w[kw] * r[ow * s + kw];
      y[ow] = acc;
    }
    return;
  }
  for (int64_t ow = 0; ow < ow_count; ++ow) {
    float acc = y[ow];
    for (int64_t kw = 0; kw < kws; ++kw) acc += w[kw] * r[ow * s + kw * dw];
    y[ow] = acc;
  }
}

// One output row: y[0, OW) = sum over the KH tap rows `rows[kh]` (each already offset to the
// window's first column) of add_tap_row.
struct RowArgs {
  const float* const* rows;
  const float* w;  // [KH, KW] of this output channel
  int64_t kh, kw, stride, dw, ow_count;
  float* y;
};

template <int KW, int S>
DNNX_ALWAYS_INLINE void row_body(const RowArgs& a) {
  std::fill(a.y, a.y + a.ow_count, 0.0f);
  for (int64_t kh = 0; kh < a.kh; ++kh) {
    add_tap_row<KW, S>(a.rows[kh], a.w + kh * a.kw, a.kw, a.stride, a.dw, a.ow_count, a.y);
  }
}

// One function per (KW, S) specialization, each cloned for AVX2 (a template cannot carry
// target_clones; the always-inline body is compiled for each clone's target).
#define DNNX_DEPTHWISE_ROW(KW, S) \
  DNNX_DEPTHWISE_CLONES void row_k##KW##_s##S(const RowArgs& a) { row_body<KW, S>(a); }
DNNX_DEPTHWISE_ROW(1, 1)
DNNX_DEPTHWISE_ROW(1, 2)
DNNX_DEPTHWISE_ROW(3, 1)
DNNX_DEPTHWISE_ROW(3, 2)
DNNX_DEPTHWISE_ROW(5, 1)
DNNX_DEPTHWISE_ROW(5, 2)
DNNX_DEPTHWISE_ROW(7, 1)
DNNX_DEPTHWISE_ROW(7, 2)
DNNX_DEPTHWISE_ROW(0, 0)
#undef DNNX_DEPTHWISE_ROW

using RowFn = void (*)(const RowArgs&);

RowFn pick_row(int64_t kw, int64_t stride) {
  if (stride == 1 || stride == 2) {
    const bool s1 = stride == 1;
    switch (kw) {
      case 1: return s1 ? row_k1_s1 : row_k1_s2;
      case 3: return s1 ? row_k3_s1 : row_k3_s2;
      case 5: return s1 ? row_k5_s1 : row_k5_s2;
      case 7: return s1 ? row_k7_s1 : row_k7_s2;
      default: break;
    }
  }
  return row_k0_s0;
}

// The padded plane: rows and columns enough for every tap of every output.
struct Padded {
  bool needed = false;
  int64_t top = 0, left = 0, rows = 0, cols = 0;
};

Padded padded_of(const ConvGeometry& g) {
  Padded p;
  p.needed = g.has_padding();
  p.top = g.pads_begin[kH];
  p.left = g.pads_begin[kW];
  const int64_t need_rows = (g.output[kH] - 1) * g.strides[kH] + g.effective_kernel(kH);
  const int64_t need_cols = (g.output[kW] - 1) * g.strides[kW] + g.effective_kernel(kW);
  p.rows = p.needed ? std::max(need_rows, p.top + g.input[kH]) : g.input[kH];
  p.cols = p.needed ? std::max(need_cols, p.left + g.input[kW]) : g.input[kW];
  return p;
}

class DepthwiseConv final : public Kernel {
 public:
  DepthwiseConv(const ConvShape& s, bool has_bias, bool relu, bool residual, int workers)
      : s_(s), p_(padded_of(s.g)), row_(pick_row(s.g.kernel[kW], s.g.strides[kW])), has_bias_(has_bias),
        relu_(relu), residual_(residual), workers_(workers) {}

  static int64_t plane_floats(const ConvShape& s) {
    const Padded p = padded_of(s.g);
    return p.needed ? p.rows * p.cols : 0;
  }

  void run(const KernelArgs& args) const override {
    float* scratch = static_cast<float*>(args.workspace);
    const int64_t plane = plane_floats(s_);
    cpu_thread_pool().parallel_for(s_.batch * s_.channels, [&](int64_t begin, int64_t end, int worker) {
      for (int64_t item = begin; item < end; ++item) run_plane(args, item / s_.channels, item % s_.channels,
                                                               scratch + worker * plane);
    }, workers_);
  }

 private:
  // Input plane (n, c) into its `multiplier` output channels.
  void run_plane(const KernelArgs& args, int64_t n, int64_t c, float* scratch) const {
    const ConvGeometry& g = s_.g;
    const int64_t in_h = g.input[kH], in_w = g.input[kW], out_h = g.output[kH], out_w = g.output[kW];
    const int64_t kh = g.kernel[kH], kw = g.kernel[kW];
    const float* x = args.in(0) + (n * s_.channels + c) * in_h * in_w;
    const float* src = x;
    int64_t ld = in_w;
    if (p_.needed) {
      pad_plane(x, scratch);
      src = scratch;
      ld = p_.cols;
    }
    const int64_t mult = s_.group_filters();
    const float* rows[64];  // kh <= 64 (why_not_depthwise_conv)
    for (int64_t m = 0; m < mult; ++m) {
      const int64_t oc = c * mult + m;
      const int64_t y_offset = (n * s_.filters + oc) * out_h * out_w;
      float* y = args.out(0) + y_offset;
      ConvEpilogue e;
      e.bias = has_bias_ ? args.in(2) + oc : nullptr;
      e.relu = relu_;
      const float* z = residual_ ? args.in(3) + y_offset : nullptr;
      RowArgs a{rows, args.in(1) + oc * kh * kw, kh, kw, g.strides[kW], g.dilations[kW], out_w, nullptr};
      for (int64_t oh = 0; oh < out_h; ++oh) {
        const int64_t first = oh * g.strides[kH];
        for (int64_t t = 0; t < kh; ++t) rows[t] = src + (first + t * g.dilations[kH]) * ld;
        a.y = y + oh * out_w;
        row_(a);
        e.residual = z ? z + oh * out_w : nullptr;
        apply_conv_epilogue(e, 1, out_w, a.y);
      }
    }
  }

  // scratch [rows, cols] = x [H, W] at (top, left), zeros around it.
  void pad_plane(const float* x, float* scratch) const {
    const int64_t in_h = s_.g.input[kH], in_w = s_.g.input[kW];
    std::fill(scratch, scratch + p_.top * p_.cols, 0.0f);
    for (int64_t h = 0; h < in_h; ++h) {
      float* row = scratch + (p_.top + h) * p_.cols;
      std::fill(row, row + p_.left, 0.0f);
      std::memcpy(row + p_.left, x + h * in_w, static_cast<size_t>(in_w) * sizeof(float));
      std::fill(row + p_.left + in_w, row + p_.cols, 0.0f);
    }
    std::fill(scratch + (p_.top + in_h) * p_.cols, scratch + p_.rows * p_.cols, 0.0f);
  }

  ConvShape s_;
  Padded p_;
  RowFn row_;
  bool has_bias_, relu_, residual_;
  int workers_;
};

}  // namespace

std::string why_not_depthwise_conv(const ConvShape& s) {
  const ConvGeometry& g = s.g;
  if (g.group == 1 || s.group_channels() != 1) return "not depthwise (" + std::to_string(s.group_channels()) +
                                                       " channels per group)";
  if (g.kernel[kD] != 1 || g.input[kD] != 1 || g.output[kD] != 1) return "a 3-D window";
  if (g.kernel[kH] > 64) return "kernel taller than 64";
  return "";
}

int depthwise_conv_workers(const ConvShape& s) {
  const ConvGeometry& g = s.g;
  return plan_workers(s.batch * s.channels, s.group_filters() * g.output_size() * g.kernel_size());
}

size_t depthwise_conv_workspace_bytes(const ConvShape& s, int workers) {
  return static_cast<size_t>(workers * DepthwiseConv::plane_floats(s)) * sizeof(float);
}

std::unique_ptr<Kernel> make_depthwise_conv(const ConvShape& s, bool has_bias, bool relu, bool residual, int workers) {
  return std::make_unique<DepthwiseConv>(s, has_bias, relu, residual, workers);
}

}  // namespace dnnx
