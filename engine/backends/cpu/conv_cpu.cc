// Conv on the CPU, NCHW float32: per batch item and per group, Y_g = W_g x col, one sgemm each.
// col is X_g itself for a pointwise (1x1, stride 1, unpadded) conv ("gemm(1x1)"), otherwise
// X_g unrolled by im2col into the planner's workspace ("im2col+gemm"). Every spatial rank runs
// as 3-D, with unit dims prepended (ConvGeometry::expanded_to). "Conv+Relu" (made by the
// fuse_conv_relu pass) is the same kernel with the Relu applied after the bias, per output tile.
#include <algorithm>
#include <cstring>

#include "backends/cpu/activation_cpu.h"
#include "backends/cpu/blas.h"
#include "backends/cpu/cpu_kernels.h"
#include "ops/conv_geometry.h"

namespace dnnx {

namespace {

constexpr size_t kKernelRank = 3;  // D, H, W
enum Dim { kD = 0, kH = 1, kW = 2 };

enum class ConvAlgo { Pointwise, Im2colGemm };
// The activation the kernel applies to Y_g after the bias, while Y_g is still in cache.
enum class ConvActivation { None, Relu };

// The sizes of one conv, fixed at plan time.
struct ConvShape {
  int64_t batch = 0;
  int64_t channels = 0;  // C
  int64_t filters = 0;   // M
  ConvGeometry g;        // expanded to 3 spatial dims
  int64_t group_channels() const { return channels / g.group; }
  int64_t group_filters() const { return filters / g.group; }
  int64_t col_rows() const { return group_channels() * g.kernel_size(); }
};

// One row of col: what every output position [OD, OH, OW] of channel xc [D, H, W] sees
// through tap (kd, kh, kw), 0 where the tap falls in the padding.
void im2col_tap(const ConvGeometry& g, const float* xc, int64_t kd, int64_t kh, int64_t kw,
                float* dst) {
  const int64_t in_d = g.input[kD], in_h = g.input[kH], in_w = g.input[kW];
  const int64_t out_w = g.output[kW], stride_w = g.strides[kW];
  // Output column ow reads input column ow * stride_w + w0, inside the row for ow in [lo, hi).
  const int64_t w0 = kw * g.dilations[kW] - g.pads_begin[kW];
  const IndexRange inside = g.outputs_inside(kW, kw);
  const int64_t lo = inside.lo, hi = inside.hi;
  for (int64_t od = 0; od < g.output[kD]; ++od) {
    const int64_t id = g.window_start(kD, od) + kd * g.dilations[kD];
    for (int64_t oh = 0; oh < g.output[kH]; ++oh, dst += out_w) {
      const int64_t ih = g.window_start(kH, oh) + kh * g.dilations[kH];
      if (id < 0 || id >= in_d || ih < 0 || ih >= in_h) {
        std::fill(dst, dst + out_w, 0.0f);
        continue;
      }
      const float* src = xc + (id * in_h + ih) * in_w;
      std::fill(dst, dst + lo, 0.0f);
      if (stride_w == 1) {
        std::memcpy(dst + lo, src + lo + w0, static_cast<size_t>(hi - lo) * sizeof(float));
      } else {
        for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = src[ow * stride_w + w0];
      }
      std::fill(dst + hi, dst + out_w, 0.0f);
    }
  }
}

// Unrolls one group of one image: x is [Cg, D, H, W]; col is [Cg*KD*KH*KW, OD*OH*OW], row
// ((c*KD + kd)*KH + kh)*KW + kw for tap (kd, kh, kw) of channel c, matching W_g's layout.
void im2col(const ConvShape& s, const float* x, float* col) {
  const ConvGeometry& g = s.g;
  float* row = col;
  for (int64_t c = 0; c < s.group_channels(); ++c) {
    const float* xc = x + c * g.input_size();
    for (int64_t kd = 0; kd < g.kernel[kD]; ++kd) {
      for (int64_t kh = 0; kh < g.kernel[kH]; ++kh) {
        for (int64_t kw = 0; kw < g.kernel[kW]; ++kw, row += g.output_size()) {
          im2col_tap(g, xc, kd, kh, kw, row);
        }
      }
    }
  }
}

class ConvKernel final : public Kernel {
 public:
  ConvKernel(ConvShape shape, ConvAlgo algo, bool has_bias, ConvActivation activation)
      : s_(std::move(shape)), algo_(algo), has_bias_(has_bias), activation_(activation) {}

  // x [N, C, in...], w [M, C/group, k...], b [M], y [N, M, out...]; workspace holds col.
  void run(const KernelArgs& args) const override {
    const float* x = args.in(0);
    const float* w = args.in(1);
    float* y = args.out(0);
    const float* bias = has_bias_ ? args.in(2) : nullptr;
    float* col = static_cast<float*>(args.workspace);
    const int64_t mg = s_.group_filters(), rows = s_.col_rows(), out_size = s_.g.output_size();
    // One image at a time: its col stays in cache between im2col and the GEMM (measured faster
    // than unrolling several images into one wide GEMM, for LeNet's layers at batch 256).
    for (int64_t n = 0; n < s_.batch; ++n) {
      for (int64_t grp = 0; grp < s_.g.group; ++grp) {
        const float* x_g = x + (n * s_.channels + grp * s_.group_channels()) * s_.g.input_size();
        const float* cols = x_g;  // pointwise: X_g [Cg, H*W] is already the column matrix
        if (algo_ == ConvAlgo::Im2colGemm) {
          im2col(s_, x_g, col);
          cols = col;
        }
        // Y_g [Mg, OSP] = W_g [Mg, Cg*K] x cols [Cg*K, OSP], then + B_g (and Relu) while Y_g is in cache.
        float* y_g = y + (n * s_.filters + grp * mg) * out_size;
        sgemm(false, false, static_cast<int>(mg), static_cast<int>(out_size), static_cast<int>(rows),
              1.0f, w + grp * mg * rows, static_cast<int>(rows), cols, static_cast<int>(out_size),
              0.0f, y_g, static_cast<int>(out_size));
        if (bias) add_bias(bias + grp * mg, y_g);
        if (activation_ == ConvActivation::Relu) relu_inplace(y_g, mg * out_size);
      }
    }
  }

 private:
  // y_g [Mg, OSP] += b_g [Mg] per row.
  void add_bias(const float* b_g, float* y_g) const {
    const int64_t out_size = s_.g.output_size();
    for (int64_t m = 0; m < s_.group_filters(); ++m, y_g += out_size) {
      const float bm = b_g[m];
      for (int64_t i = 0; i < out_size; ++i) y_g[i] += bm;
    }
  }

  ConvShape s_;
  ConvAlgo algo_;
  bool has_bias_;
  ConvActivation activation_;
};

// Why a conv is not a plain GEMM over X (for the plan's rejected list).
std::string why_not_pointwise(const ConvGeometry& g) {
  if (g.kernel_size() != 1) return "kernel is " + g.kernel_str();
  if (g.has_padding()) return "padding " + shape_str(g.pads_begin) + " / " + shape_str(g.pads_end);
  return "strides are " + shape_str(g.strides);
}

KernelChoice plan_conv(const Node& node, const std::vector<ValueInfo>& inputs, ConvActivation activation) {
  const Shape& x = inputs[0].info.shape;
  const Shape& w = inputs[1].info.shape;
  const ConvGeometry g = make_conv_geometry(node, WindowOp::Conv, Shape(x.begin() + 2, x.end()),
                                            Shape(w.begin() + 2, w.end()));
  ConvShape s{x[0], x[1], w[0], g.expanded_to(kKernelRank)};
  const bool has_bias = inputs.size() > 2 && inputs[2].present;
  KernelChoice choice;
  if (g.is_pointwise()) {
    choice.algorithm = "gemm(1x1)";
    choice.rejected.push_back({"im2col+gemm", "not needed: 1x1 kernel, stride 1, no padding"});
    choice.kernel = std::make_unique<ConvKernel>(std::move(s), ConvAlgo::Pointwise, has_bias, activation);
    return choice;
  }
  choice.algorithm = "im2col+gemm";
  choice.rejected.push_back({"gemm(1x1)", why_not_pointwise(g)});
  // col is [Cg*K, OSP]: one group of one image.
  choice.workspace_bytes = static_cast<size_t>(s.col_rows() * s.g.output_size()) * sizeof(float);
  choice.kernel = std::make_unique<ConvKernel>(std::move(s), ConvAlgo::Im2colGemm, has_bias, activation);
  return choice;
}

KernelFactory conv_factory(ConvActivation activation) {
  return [activation](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
    return plan_conv(node, inputs, activation);
  };
}

}  // namespace

void register_cpu_conv_kernels(KernelRegistry& r) {
  r.add("Conv", conv_factory(ConvActivation::None));
  r.add("Conv+Relu", conv_factory(ConvActivation::Relu));
}

}  // namespace dnnx
