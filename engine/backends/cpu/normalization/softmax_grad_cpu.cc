// The gradients of Softmax and LogSoftmax over the input viewed as [outer, n, inner]
// (softmax_geometry, ops/normalization/softmax.h), from the kept output y:
//   Softmax     dX = y * (dY - sum_n(dY * y))
//   LogSoftmax  dX = dY - exp(y) * sum_n(dY)
// A workspace of `inner` floats holds the sums of one [n, inner] block.
#include <algorithm>
#include <cmath>

#include "runtime/kernel_registry.h"
#include "ops/normalization/softmax.h"

namespace dnnx {

namespace {

enum class SoftmaxKind { Softmax, LogSoftmax };

class SoftmaxGradKernel final : public GradKernel {
 public:
  SoftmaxGradKernel(SoftmaxKind kind, SoftmaxGeometry g) : kind_(kind), g_(g) {}

  void run(const GradArgs& args) const override {
    float* dx = args.d_inputs[0];
    if (!dx) return;
    const int64_t block = g_.n * g_.inner;
    float* sum = static_cast<float*>(args.workspace);
    for (int64_t o = 0; o < g_.outer; ++o) {
      const int64_t at = o * block;
      block_grad(args.out(0) + at, args.d_outputs[0] + at, dx + at, sum);
    }
  }

 private:
  // y, dy, dx: [n, inner]; sum: [inner].
  void block_grad(const float* y, const float* dy, float* dx, float* sum) const {
    const int64_t n = g_.n, inner = g_.inner;
    std::fill(sum, sum + inner, 0.0f);
    for (int64_t j = 0; j < n; ++j) {
      const float* yj = y + j * inner;
      const float* dyj = dy + j * inner;
      for (int64_t i = 0; i < inner; ++i) sum[i] += kind_ == SoftmaxKind::Softmax ? dyj[i] * yj[i] : dyj[i];
    }
    for (int64_t j = 0; j < n; ++j) {
      const float* yj = y + j * inner;
      const float* dyj = dy + j * inner;
      float* dxj = dx + j * inner;
      if (kind_ == SoftmaxKind::Softmax) {
        for (int64_t i = 0; i < inner; ++i) dxj[i] = yj[i] * (dyj[i] - sum[i]);
      } else {
        for (int64_t i = 0; i < inner; ++i) dxj[i] = dyj[i] - std::exp(yj[i]) * sum[i];
      }
    }
  }

  SoftmaxKind kind_;
  SoftmaxGeometry g_;
};

GradFactory softmax_grad(SoftmaxKind kind) {
  return [kind](const GradRequest& r) {
    const SoftmaxGeometry g = softmax_geometry(r.node, r.inputs[0].info.shape);
    GradChoice choice;
    choice.algorithm = "rows";
    choice.workspace_bytes = static_cast<size_t>(std::max<int64_t>(g.inner, 1)) * sizeof(float);
    choice.kernel = std::make_unique<SoftmaxGradKernel>(kind, g);
    return choice;
  };
}

}  // namespace

void register_cpu_softmax_grad_kernels(KernelRegistry& r) {
  r.at("Softmax").with_gradient(softmax_grad(SoftmaxKind::Softmax));
  r.at("LogSoftmax").with_gradient(softmax_grad(SoftmaxKind::LogSoftmax));
}

}  // namespace dnnx
