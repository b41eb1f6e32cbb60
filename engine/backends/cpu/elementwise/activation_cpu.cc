// Relu, Sigmoid, Tanh (float32; Sigmoid and Tanh vectorized) and Neg, Abs (float32, int32, int64) on the CPU.
#include <cmath>
#include <type_traits>

#include "backends/cpu/elementwise/activation_cpu.h"
#include "backends/cpu/elementwise/fixed_chunks.h"
#include "backends/cpu/elementwise/sigmoid_rows_cpu.h"
#include "backends/cpu/elementwise/tanh_rows_cpu.h"
#include "backends/cpu/runtime/element_type.h"
#include "ops/elementwise/div_mod.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

enum class Activation { Relu, Sigmoid, Tanh };

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
        sigmoid_rows(x, y, n_);
        break;
      case Activation::Tanh:
        for_fixed_chunks(n_, kTranscendentalChunk, [&](int64_t b, int64_t e) { tanh_rows(x + b, y + b, e - b); });
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

enum class Sign { Neg, Abs };

// y = -x or |x| on float32, float64 or any integer type (an integer MIN stays MIN: ops/elementwise/div_mod.h).
template <Sign Op, class T>
class SignKernel final : public Kernel {
 public:
  explicit SignKernel(int64_t n) : n_(n) {}
  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    T* y = args.out<T>(0);
    for (int64_t i = 0; i < n_; ++i) y[i] = apply(x[i]);
  }

 private:
  static T apply(T v) {
    if constexpr (std::is_integral_v<T>) {
      return Op == Sign::Abs && v >= 0 ? v : int_neg(v);
    } else {
      return Op == Sign::Abs ? std::fabs(v) : -v;
    }
  }
  int64_t n_;
};

template <Sign Op>
KernelChoice sign_factory(const Node&, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  KernelChoice choice;
  choice.kernel = with_number(inputs[0].info.dtype, [&](auto t) -> std::unique_ptr<Kernel> {
    return std::make_unique<SignKernel<Op, decltype(t)>>(numel(inputs[0].info.shape));
  });
  choice.algorithm = "elementwise";
  return choice;
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
  r.add("Neg", sign_factory<Sign::Neg>).with_dtypes(number_types()).with_gradient(plan_neg_grad);
  r.add("Abs", sign_factory<Sign::Abs>).with_dtypes(number_types());
}

}  // namespace dnnx
