// The gradients of LeakyRelu, Elu, Selu and Clip on the CPU: one pass over x, y and dY with the
// formulas of ops/elementwise/param_activation_grad.h (shared with CUDA). Clip's bounds come
// from its attributes, or from its min/max inputs, read as the kernel runs (as the forward does).
#include "ops/elementwise/param_activation_grad.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

constexpr size_t kClipMin = 1, kClipMax = 2;

class ParamActivationGradKernel final : public GradKernel {
 public:
  ParamActivationGradKernel(ParamActivationGradPlan plan, int64_t n) : plan_(plan), n_(n) {}

  void run(const GradArgs& args) const override {
    float* dx = args.d_inputs[0];
    if (!dx) return;
    ParamActivationSlope slope = plan_.slope;
    if (plan_.min_input) slope.lo = *args.in(kClipMin);
    if (plan_.max_input) slope.hi = *args.in(kClipMax);
    const float* x = args.in(0);
    const float* y = args.out(0);
    const float* dy = args.d_outputs[0];
    for (int64_t i = 0; i < n_; ++i) dx[i] = slope(x[i], y[i], dy[i]);
  }

 private:
  ParamActivationGradPlan plan_;
  int64_t n_;
};

GradChoice plan_param_activation_grad(const GradRequest& r) {
  GradChoice choice;
  choice.algorithm = "elementwise";
  choice.kernel = std::make_unique<ParamActivationGradKernel>(param_activation_grad_plan(r.node, r.inputs, r.needs_grad),
                                                             numel(r.outputs[0].shape));
  return choice;
}

}  // namespace

void register_cpu_param_activation_grad_kernels(KernelRegistry& r) {
  for (const char* op : {"LeakyRelu", "Elu", "Selu", "Clip"}) r.at(op).with_gradient(plan_param_activation_grad);
}

}  // namespace dnnx
