// ConvTranspose on the CPU, NCHW float32, as the data gradient of its adjoint Conv
// (ops/conv/conv_transpose.h), per image and group:
//   col [Mg*K, ISP] = W_g^T [Mg*K, Cg] x X_g [Cg, ISP]      one sgemm
//   Y_g [Mg, out...] = col2im(col), then + B                col2im of conv_grad_cpu.cc's dX
// with X_g [Cg, in...] (ISP = prod in), W_g [Cg, Mg*K] (W is [C, M/group, k...]). A pointwise
// transpose (1x1, stride 1, no pads) writes the GEMM straight into Y_g. The images are split
// across the CPU thread pool, each worker with its own col (Note [cpu threads]). 1-D and 2-D run
// as 3-D with unit dims prepended (ConvGeometry::expanded_to).
#include <algorithm>

#include "backends/cpu/dense/blas.h"
#include "backends/cpu/conv/conv_transpose_cpu.h"
#include "backends/cpu/runtime/thread_pool.h"
#include "ops/conv/conv_transpose.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

ConvShape conv_transpose_shape(const Node& node, const Shape& x, const Shape& w) {
  const ConvGeometry g = conv_transpose_geometry(node, Shape(x.begin() + 2, x.end()), Shape(w.begin() + 2, w.end()));
  // The adjoint Conv: channels M = W[1] * group (Y's), filters C (X's).
  return ConvShape{x[0], w[1] * g.group, w[0], g.expanded_to(kConvKernelRank)};
}

namespace {

class ConvTransposeKernel final : public Kernel {
 public:
  ConvTransposeKernel(ConvShape s, bool pointwise, bool has_bias, int workers)
      : s_(std::move(s)), pointwise_(pointwise), has_bias_(has_bias), workers_(workers) {}

  // Workspace: one col [Mg*K, ISP] per worker (none when pointwise).
  static size_t col_floats(const ConvShape& s) { return static_cast<size_t>(s.col_rows() * s.g.output_size()); }

  void run(const KernelArgs& args) const override {
    float* cols = static_cast<float*>(args.workspace);
    const size_t per_worker = pointwise_ ? 0 : col_floats(s_);
    cpu_thread_pool().parallel_for(s_.batch, [&](int64_t begin, int64_t end, int worker) {
      run_images(args, begin, end, cols + worker * per_worker);
    }, workers_);
  }

 private:
  void run_images(const KernelArgs& args, int64_t begin, int64_t end, float* col) const {
    const float* x = args.in(0);
    const float* w = args.in(1);
    float* y = args.out(0);
    const int64_t cg = s_.group_filters(), rows = s_.col_rows(), isp = s_.g.output_size(), osp = s_.g.input_size();
    for (int64_t n = begin; n < end; ++n) {
      for (int64_t grp = 0; grp < s_.g.group; ++grp) {
        const float* x_g = x + (n * s_.filters + grp * cg) * isp;
        float* y_g = y + (n * s_.channels + grp * s_.group_channels()) * osp;
        float* target = pointwise_ ? y_g : col;
        // col [rows, ISP] = W_g^T [rows, Cg] x X_g [Cg, ISP]
        sgemm(true, false, static_cast<int>(rows), static_cast<int>(isp), static_cast<int>(cg), 1.0f,
              w + grp * cg * rows, static_cast<int>(rows), x_g, static_cast<int>(isp), 0.0f, target,
              static_cast<int>(isp));
        if (!pointwise_) col2im(s_, col, y_g);
      }
      if (has_bias_) {
        const float* b = args.in(2);
        for (int64_t m = 0; m < s_.channels; ++m) {
          float* plane = y + (n * s_.channels + m) * osp;
          for (int64_t i = 0; i < osp; ++i) plane[i] += b[m];
        }
      }
    }
  }

  ConvShape s_;
  bool pointwise_;
  bool has_bias_;
  int workers_;
};

KernelChoice plan_conv_transpose(const Node& node, const std::vector<ValueInfo>& inputs,
                                 const std::vector<TensorInfo>&) {
  ConvShape s = conv_transpose_shape(node, inputs[0].info.shape, inputs[1].info.shape);
  const bool has_bias = inputs.size() > 2 && inputs[2].present;
  const bool pointwise = s.g.is_pointwise();
  const int workers = plan_workers(s.batch, s.filters * s.col_rows() * s.g.output_size());
  KernelChoice choice;
  choice.algorithm = with_threads(pointwise ? "gemm(1x1)" : "gemm+col2im", workers);
  if (!pointwise) choice.workspace_bytes = workers * ConvTransposeKernel::col_floats(s) * sizeof(float);
  choice.kernel = std::make_unique<ConvTransposeKernel>(std::move(s), pointwise, has_bias, workers);
  return choice;
}

}  // namespace

void register_cpu_conv_transpose_kernels(KernelRegistry& r) { r.add("ConvTranspose", plan_conv_transpose); }

}  // namespace dnnx
