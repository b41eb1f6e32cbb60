// BatchNormalization's gradient in its inference form (the statistics are constants: a frozen
// BN inside the trainable tail, which the tail does not fold into a trainable Conv). Per channel
// c, with s = scale / sqrt(var + eps) and xhat = (x - mean) / sqrt(var + eps):
//   dX = dY * s      dscale = sum(dY * xhat)      dB = sum(dY)
// Training the running mean or variance is refused at plan time.
#include <algorithm>
#include <cmath>

#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

constexpr float kDefaultEpsilon = 1e-5f;
enum BatchNormInput : size_t { kX = 0, kScale = 1, kBias = 2, kMean = 3, kVar = 4 };

class BatchNormGradKernel final : public GradKernel {
 public:
  BatchNormGradKernel(int64_t batch, int64_t channels, int64_t plane, float epsilon)
      : batch_(batch), channels_(channels), plane_(plane), epsilon_(epsilon) {}

  // x, dy, dx [N, C, plane]; scale, bias, mean, var [C].
  void run(const GradArgs& args) const override {
    const float* x = args.in(kX);
    const float *scale = args.in(kScale), *mean = args.in(kMean), *var = args.in(kVar);
    const float* dy = args.d_outputs[0];
    float *dx = args.d_inputs[kX], *dscale = args.d_inputs[kScale], *dbias = args.d_inputs[kBias];
    for (int64_t c = 0; c < channels_; ++c) {
      const float inv_std = 1.0f / std::sqrt(var[c] + epsilon_);
      const float s = scale[c] * inv_std;
      float sum_dy = 0.0f, sum_dy_xhat = 0.0f;
      for (int64_t n = 0; n < batch_; ++n) {
        const int64_t at = (n * channels_ + c) * plane_;
        for (int64_t i = 0; i < plane_; ++i) {
          sum_dy += dy[at + i];
          sum_dy_xhat += dy[at + i] * (x[at + i] - mean[c]) * inv_std;
          if (dx) dx[at + i] = dy[at + i] * s;
        }
      }
      if (dscale) dscale[c] = sum_dy_xhat;
      if (dbias) dbias[c] = sum_dy;
    }
  }

 private:
  int64_t batch_, channels_, plane_;
  float epsilon_;
};

GradChoice plan_batchnorm_grad(const GradRequest& r) {
  // The statistics never need a gradient here: OpDef::untrainable (ops/normalization/batchnorm.cc) refused that.
  const Shape& x = r.inputs[kX].info.shape;
  const int64_t plane = numel(x) / std::max<int64_t>(1, x[0] * x[1]);
  GradChoice choice;
  choice.algorithm = "per channel";
  choice.kernel = std::make_unique<BatchNormGradKernel>(x[0], x[1], plane, r.node.attr_float("epsilon", kDefaultEpsilon));
  return choice;
}

}  // namespace

void register_cpu_batchnorm_grad_kernels(KernelRegistry& r) { r.at("BatchNormalization").with_gradient(plan_batchnorm_grad); }

}  // namespace dnnx
