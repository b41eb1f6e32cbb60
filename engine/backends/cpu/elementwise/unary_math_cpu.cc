// The unary float ops of ops/elementwise/unary_math.h on the CPU, forward and gradient side by side: one
// kernel template per direction over the op's kind, so that each kind compiles to its own loop.
//   forward   y = f(x)
//   gradient  dX = dY * f'(x) (f' from x and the kept y: ops/elementwise/unary_math.h's unary_slope)
// Abs's forward is activation_cpu.cc's (it also takes integers); its float gradient is here.
#include "ops/elementwise/unary_math.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

template <UnaryMath K>
class UnaryMathKernel final : public Kernel {
 public:
  UnaryMathKernel(UnaryParams params, int64_t n) : params_(params), n_(n) {}
  void run(const KernelArgs& args) const override {
    const float* x = args.in(0);
    float* y = args.out(0);
    for (int64_t i = 0; i < n_; ++i) y[i] = unary_value<K>(x[i], params_);
  }

 private:
  UnaryParams params_;
  int64_t n_;
};

template <UnaryMath K>
class UnaryMathGradKernel final : public GradKernel {
 public:
  UnaryMathGradKernel(UnaryParams params, int64_t n) : params_(params), n_(n) {}
  void run(const GradArgs& args) const override {
    float* dx = args.d_inputs[0];
    if (!dx) return;
    const float *x = args.in(0), *y = args.out(0), *dy = args.d_outputs[0];
    for (int64_t i = 0; i < n_; ++i) dx[i] = dy[i] * unary_slope<K>(x[i], y[i], params_);
  }

 private:
  UnaryParams params_;
  int64_t n_;
};

KernelChoice plan_unary_math(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  KernelChoice choice;
  choice.algorithm = "elementwise";
  with_unary_math(unary_math_kind(node), [&](auto tag) {
    choice.kernel = std::make_unique<UnaryMathKernel<decltype(tag)::kind>>(unary_math_params(node),
                                                                          numel(inputs[0].info.shape));
  });
  return choice;
}

GradChoice plan_unary_math_grad(const GradRequest& r) {
  GradChoice choice;
  choice.algorithm = "elementwise";
  with_unary_math(unary_math_kind(r.node), [&](auto tag) {
    choice.kernel = std::make_unique<UnaryMathGradKernel<decltype(tag)::kind>>(unary_math_params(r.node),
                                                                              numel(r.inputs[0].info.shape));
  });
  return choice;
}

}  // namespace

void register_cpu_unary_math_kernels(KernelRegistry& r) {
  for (const char* op : {"Exp", "Log", "Sqrt", "Reciprocal", "Erf", "Gelu", "HardSigmoid", "HardSwish", "Softplus",
                         "Mish"}) {
    r.add(op, plan_unary_math).with_gradient(plan_unary_math_grad);
  }
  r.at("Abs").with_gradient(plan_unary_math_grad);  // float Abs (the forward: activation_cpu.cc)
}

}  // namespace dnnx
