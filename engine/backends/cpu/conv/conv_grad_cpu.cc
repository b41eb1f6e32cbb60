// Conv's gradient on the CPU, NCHW float32, per image and group (shapes as in conv_cpu.cc:
// X_g [Cg, in...], W_g [Mg, Cg*K], Y_g [Mg, OSP], col [Cg*K, OSP] = im2col(X_g)):
//   dW_g = sum over images of dY_g col^T     one sgemm per image, accumulating (beta 1)
//   dB   = dY summed over images and positions
//   dX_g = col2im(W_g^T dY_g)                one sgemm into dcol, then col2im
// A pointwise conv (1x1, stride 1, unpadded) uses X_g and dX_g as the column matrices directly.
// 1-D and 2-D convs run as 3-D with unit dims prepended, as the forward kernel does.
#include <algorithm>

#include "backends/cpu/dense/blas.h"
#include "runtime/kernel_registry.h"
#include "backends/cpu/conv/im2col_cpu.h"

namespace dnnx {

namespace {

enum ConvInput : size_t { kX = 0, kW = 1, kB = 2 };
enum class ConvGradAlgo { Pointwise, Im2colGemm };

class ConvGradKernel final : public GradKernel {
 public:
  ConvGradKernel(ConvShape s, ConvGradAlgo algo, bool has_bias) : s_(std::move(s)), algo_(algo), has_bias_(has_bias) {}

  // Workspace: col then dcol, each [Cg*K, OSP] (im2col only).
  static size_t workspace_floats(const ConvShape& s) { return static_cast<size_t>(2 * s.col_rows() * s.g.output_size()); }

  void run(const GradArgs& args) const override {
    const float* dy = args.d_outputs[0];
    float* col = static_cast<float*>(args.workspace);
    float* dcol = col + s_.col_rows() * s_.g.output_size();
    if (args.d_inputs[kW]) grad_w(args.in(kX), dy, args.d_inputs[kW], col);
    if (has_bias_ && args.d_inputs[kB]) grad_b(dy, args.d_inputs[kB]);
    if (args.d_inputs[kX]) grad_x(args.in(kW), dy, args.d_inputs[kX], dcol);
  }

 private:
  int64_t x_offset(int64_t n, int64_t grp) const {
    return (n * s_.channels + grp * s_.group_channels()) * s_.g.input_size();
  }
  int64_t y_offset(int64_t n, int64_t grp) const {
    return (n * s_.filters + grp * s_.group_filters()) * s_.g.output_size();
  }

  void grad_w(const float* x, const float* dy, float* dw, float* col) const {
    const int64_t mg = s_.group_filters(), rows = s_.col_rows(), osp = s_.g.output_size();
    for (int64_t n = 0; n < s_.batch; ++n) {
      for (int64_t grp = 0; grp < s_.g.group; ++grp) {
        const float* cols = x + x_offset(n, grp);
        if (algo_ == ConvGradAlgo::Im2colGemm) {
          im2col(s_, cols, col);
          cols = col;
        }
        // dW_g [Mg, rows] (+)= dY_g [Mg, OSP] x cols^T [OSP, rows]
        sgemm(false, true, static_cast<int>(mg), static_cast<int>(rows), static_cast<int>(osp), 1.0f,
              dy + y_offset(n, grp), static_cast<int>(osp), cols, static_cast<int>(osp), n == 0 ? 0.0f : 1.0f,
              dw + grp * mg * rows, static_cast<int>(rows));
      }
    }
    if (s_.batch == 0) std::fill(dw, dw + s_.filters * rows, 0.0f);
  }

  void grad_b(const float* dy, float* db) const {
    const int64_t osp = s_.g.output_size();
    std::fill(db, db + s_.filters, 0.0f);
    for (int64_t n = 0; n < s_.batch; ++n) {
      for (int64_t m = 0; m < s_.filters; ++m) {
        const float* row = dy + (n * s_.filters + m) * osp;
        float sum = 0.0f;
        for (int64_t i = 0; i < osp; ++i) sum += row[i];
        db[m] += sum;
      }
    }
  }

  void grad_x(const float* w, const float* dy, float* dx, float* dcol) const {
    const int64_t mg = s_.group_filters(), rows = s_.col_rows(), osp = s_.g.output_size();
    for (int64_t n = 0; n < s_.batch; ++n) {
      for (int64_t grp = 0; grp < s_.g.group; ++grp) {
        float* dx_g = dx + x_offset(n, grp);
        float* target = algo_ == ConvGradAlgo::Im2colGemm ? dcol : dx_g;
        // dcol [rows, OSP] = W_g^T [rows, Mg] x dY_g [Mg, OSP]
        sgemm(true, false, static_cast<int>(rows), static_cast<int>(osp), static_cast<int>(mg), 1.0f,
              w + grp * mg * rows, static_cast<int>(rows), dy + y_offset(n, grp), static_cast<int>(osp), 0.0f,
              target, static_cast<int>(osp));
        if (algo_ == ConvGradAlgo::Im2colGemm) col2im(s_, dcol, dx_g);
      }
    }
  }

  ConvShape s_;
  ConvGradAlgo algo_;
  bool has_bias_;
};

GradChoice plan_conv_grad(const GradRequest& r) {
  const Shape& x = r.inputs[kX].info.shape;
  const Shape& w = r.inputs[kW].info.shape;
  const ConvGeometry g = make_conv_geometry(r.node, WindowOp::Conv, Shape(x.begin() + 2, x.end()),
                                            Shape(w.begin() + 2, w.end()));
  ConvShape s{x[0], x[1], w[0], g.expanded_to(kConvKernelRank)};
  GradChoice choice;
  const ConvGradAlgo algo = g.is_pointwise() ? ConvGradAlgo::Pointwise : ConvGradAlgo::Im2colGemm;
  choice.algorithm = algo == ConvGradAlgo::Pointwise ? "gemm(1x1)" : "im2col+gemm / col2im";
  if (algo == ConvGradAlgo::Im2colGemm) choice.workspace_bytes = ConvGradKernel::workspace_floats(s) * sizeof(float);
  const bool has_bias = r.inputs.size() > kB && r.inputs[kB].present;
  choice.kernel = std::make_unique<ConvGradKernel>(std::move(s), algo, has_bias);
  return choice;
}

}  // namespace

void register_cpu_conv_grad_kernels(KernelRegistry& r) { r.at("Conv").with_gradient(plan_conv_grad); }

}  // namespace dnnx
