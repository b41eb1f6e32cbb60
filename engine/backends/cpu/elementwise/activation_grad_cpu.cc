// The gradients of the elementwise activations, from the kept output y (and dY):
//   Relu     dX = dY where y > 0, else 0   (at x == 0 the subgradient 0, as PyTorch takes it)
//   Sigmoid  dX = dY * y * (1 - y)
//   Tanh     dX = dY * (1 - y^2)
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

enum class Activation { Relu, Sigmoid, Tanh };

class ActivationGradKernel final : public GradKernel {
 public:
  ActivationGradKernel(Activation kind, int64_t n) : kind_(kind), n_(n) {}

  void run(const GradArgs& args) const override {
    const float* y = args.out(0);
    const float* dy = args.d_outputs[0];
    float* dx = args.d_inputs[0];
    if (!dx) return;
    switch (kind_) {
      case Activation::Relu:
        for (int64_t i = 0; i < n_; ++i) dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
        break;
      case Activation::Sigmoid:
        for (int64_t i = 0; i < n_; ++i) dx[i] = dy[i] * y[i] * (1.0f - y[i]);
        break;
      case Activation::Tanh:
        for (int64_t i = 0; i < n_; ++i) dx[i] = dy[i] * (1.0f - y[i] * y[i]);
        break;
    }
  }

 private:
  Activation kind_;
  int64_t n_;
};

GradFactory activation_grad(Activation kind) {
  return [kind](const GradRequest& r) {
    GradChoice choice;
    choice.algorithm = "elementwise";
    choice.kernel = std::make_unique<ActivationGradKernel>(kind, numel(r.outputs[0].shape));
    return choice;
  };
}

}  // namespace

void register_cpu_activation_grad_kernels(KernelRegistry& r) {
  r.at("Relu").with_gradient(activation_grad(Activation::Relu));
  r.at("Sigmoid").with_gradient(activation_grad(Activation::Sigmoid));
  r.at("Tanh").with_gradient(activation_grad(Activation::Tanh));
}

}  // namespace dnnx
