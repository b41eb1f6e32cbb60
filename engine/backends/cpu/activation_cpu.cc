#include <cmath>

#include "backends/cpu/activation_cpu.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

enum class Activation { Relu, Sigmoid, Tanh, Neg };

class ActivationKernel final : public Kernel {
 public:
  ActivationKernel(Activation kind, int64_t n) : kind_(kind), n_(n) {}
  void run(const KernelArgs& args) const override {
    const float* x = args.in(0);
    float* y = args.out(0);
    switch (kind_) {
      case Activation::Relu:
        for (int64_t i = 0; i < n_; ++i) y[i] = x[i] < 0.0f ? 0.0f : x[i];  // NaN passes through, as max(0, x) does in onnxruntime
        break;
      case Activation::Sigmoid:
        for (int64_t i = 0; i < n_; ++i) y[i] = sigmoidf(x[i]);
        break;
      case Activation::Tanh:
        for (int64_t i = 0; i < n_; ++i) y[i] = std::tanh(x[i]);
        break;
      case Activation::Neg:
        for (int64_t i = 0; i < n_; ++i) y[i] = -x[i];
        break;
    }
  }

 private:
  Activation kind_;
  int64_t n_;
};

KernelFactory activation_factory(Activation kind) {
  return [kind](const Node&, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
    KernelChoice choice;
    choice.kernel = std::make_unique<ActivationKernel>(kind, numel(inputs[0].info.shape));
    choice.algorithm = "elementwise";
    return choice;
  };
}

// Neg's gradient: dX = -dY (the other activations' are activation_grad_cpu.cc's).
class NegGradKernel final : public GradKernel {
 public:
  explicit NegGradKernel(int64_t n) : n_(n) {}
  void run(const GradArgs& args) const override {
    float* dx = args.d_inputs[0];
    if (!dx) return;
    const float* dy = args.d_outputs[0];
    for (int64_t i = 0; i < n_; ++i) dx[i] = -dy[i];
  }

 private:
  int64_t n_;
};

GradChoice plan_neg_grad(const GradRequest& r) {
  GradChoice choice;
  choice.kernel = std::make_unique<NegGradKernel>(numel(r.inputs[0].info.shape));
  choice.algorithm = "elementwise";
  return choice;
}

}  // namespace

void register_cpu_activation_kernels(KernelRegistry& r) {
  r.add("Relu", activation_factory(Activation::Relu));
  r.add("Sigmoid", activation_factory(Activation::Sigmoid));
  r.add("Tanh", activation_factory(Activation::Tanh));
  r.add("Neg", activation_factory(Activation::Neg)).with_gradient(plan_neg_grad);
}

}  // namespace dnnx
