// ConvTranspose's gradient on the CPU: its adjoint Conv's forward and filter gradient
// (ops/conv/conv_transpose.h), per image and group, with col [Mg*K, ISP] = im2col(dY_g):
//   dX_g [Cg, ISP]   = W_g [Cg, Mg*K] x col                    the adjoint Conv's forward
//   dW_g [Cg, Mg*K] += X_g [Cg, ISP] x col^T                   summed over images (beta 1)
//   dB   [M]         = dY summed over images and positions
// One im2col per image and group serves both GEMMs; a pointwise transpose reads dY_g as col.
#include <algorithm>

#include "backends/cpu/dense/blas.h"
#include "backends/cpu/conv/conv_transpose_cpu.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

enum ConvTransposeInput : size_t { kX = 0, kW = 1, kB = 2 };

class ConvTransposeGradKernel final : public GradKernel {
 public:
  ConvTransposeGradKernel(ConvShape s, bool pointwise, bool has_bias)
      : s_(std::move(s)), pointwise_(pointwise), has_bias_(has_bias) {}

  static size_t col_floats(const ConvShape& s) { return static_cast<size_t>(s.col_rows() * s.g.output_size()); }

  void run(const GradArgs& args) const override {
    const float* dy = args.d_outputs[0];
    const float* x = args.in(kX);
    const float* w = args.in(kW);
    float* dx = args.d_inputs[kX];
    float* dw = args.d_inputs[kW];
    float* col = static_cast<float*>(args.workspace);
    const int64_t cg = s_.group_filters(), rows = s_.col_rows(), isp = s_.g.output_size(), osp = s_.g.input_size();
    if (dw) std::fill(dw, dw + s_.filters * rows, 0.0f);
    for (int64_t n = 0; n < s_.batch; ++n) {
      for (int64_t grp = 0; grp < s_.g.group; ++grp) {
        const float* dy_g = dy + (n * s_.channels + grp * s_.group_channels()) * osp;
        const int64_t x_at = (n * s_.filters + grp * cg) * isp;
        const float* cols = dy_g;
        if (!pointwise_) {
          im2col(s_, dy_g, col);
          cols = col;
        }
        if (dx) {  // dX_g [Cg, ISP] = W_g [Cg, rows] x cols [rows, ISP]
          sgemm(false, false, static_cast<int>(cg), static_cast<int>(isp), static_cast<int>(rows), 1.0f,
                w + grp * cg * rows, static_cast<int>(rows), cols, static_cast<int>(isp), 0.0f, dx + x_at,
                static_cast<int>(isp));
        }
        if (dw) {  // dW_g [Cg, rows] += X_g [Cg, ISP] x cols^T [ISP, rows]
          sgemm(false, true, static_cast<int>(cg), static_cast<int>(rows), static_cast<int>(isp), 1.0f, x + x_at,
                static_cast<int>(isp), cols, static_cast<int>(isp), 1.0f, dw + grp * cg * rows, static_cast<int>(rows));
        }
      }
    }
    if (has_bias_ && args.d_inputs[kB]) {
      float* db = args.d_inputs[kB];
      std::fill(db, db + s_.channels, 0.0f);
      for (int64_t n = 0; n < s_.batch; ++n) {
        for (int64_t m = 0; m < s_.channels; ++m) {
          const float* plane = dy + (n * s_.channels + m) * osp;
          float sum = 0.0f;
          for (int64_t i = 0; i < osp; ++i) sum += plane[i];
          db[m] += sum;
        }
      }
    }
  }

 private:
  ConvShape s_;
  bool pointwise_;
  bool has_bias_;
};

GradChoice plan_conv_transpose_grad(const GradRequest& r) {
  ConvShape s = conv_transpose_shape(r.node, r.inputs[kX].info.shape, r.inputs[kW].info.shape);
  const bool pointwise = s.g.is_pointwise();
  GradChoice choice;
  choice.algorithm = pointwise ? "gemm(1x1)" : "im2col+gemm";
  if (!pointwise) choice.workspace_bytes = ConvTransposeGradKernel::col_floats(s) * sizeof(float);
  const bool has_bias = r.inputs.size() > kB && r.inputs[kB].present;
  choice.kernel = std::make_unique<ConvTransposeGradKernel>(std::move(s), pointwise, has_bias);
  return choice;
}

}  // namespace

void register_cpu_conv_transpose_grad_kernels(KernelRegistry& r) {
  r.at("ConvTranspose").with_gradient(plan_conv_transpose_grad);
}

}  // namespace dnnx
