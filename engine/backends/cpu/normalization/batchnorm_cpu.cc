// BatchNormalization (inference) on the CPU: per channel, y = x * s + t with
// s = scale / sqrt(var + epsilon) and t = B - mean * s, computed when the kernel runs (the
// statistics may be computed tensors); then one multiply-add per element.
#include <algorithm>
#include <cmath>

#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

constexpr float kDefaultEpsilon = 1e-5f;

class BatchNormKernel final : public Kernel {
 public:
  BatchNormKernel(int64_t batch, int64_t channels, int64_t plane, float epsilon)
      : batch_(batch), channels_(channels), plane_(plane), epsilon_(epsilon) {}

  // x, y [N, C, plane]; scale, bias, mean, var [C].
  void run(const KernelArgs& args) const override {
    const float* x = args.in(0);
    const float *scale = args.in(1), *bias = args.in(2), *mean = args.in(3), *var = args.in(4);
    float* y = args.out(0);
    for (int64_t c = 0; c < channels_; ++c) {
      const float s = scale[c] / std::sqrt(var[c] + epsilon_);
      const float t = bias[c] - mean[c] * s;
      for (int64_t n = 0; n < batch_; ++n) {
        const int64_t at = (n * channels_ + c) * plane_;
        for (int64_t i = 0; i < plane_; ++i) y[at + i] = x[at + i] * s + t;
      }
    }
  }

 private:
  int64_t batch_, channels_, plane_;
  float epsilon_;
};

KernelChoice plan_batchnorm(const Node& node, const std::vector<ValueInfo>& inputs,
                            const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;
  const int64_t plane = numel(x) / std::max<int64_t>(1, x[0] * x[1]);
  KernelChoice choice;
  choice.algorithm = "scale+shift";
  choice.kernel = std::make_unique<BatchNormKernel>(x[0], x[1], plane,
                                                    node.attr_float("epsilon", kDefaultEpsilon));
  return choice;
}

}  // namespace

void register_cpu_batchnorm_kernels(KernelRegistry& r) { r.add("BatchNormalization", plan_batchnorm); }

}  // namespace dnnx
