// The gradients of LeakyRelu, Elu, Selu and Clip on CUDA: one elementwise kernel from the kept x,
// y and dY (param_activation_grad_kernels.cu), the CPU's formulas
// (ops/elementwise/param_activation_grad.h). Clip's min/max inputs are read on the device.
#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/backend/lambda_grad.h"
#include "backends/cuda/elementwise/param_activation_grad_cuda.h"

namespace dnnx::cuda {

namespace {

constexpr size_t kClipMin = 1, kClipMax = 2;

GradChoice plan_param_activation_grad(const GradRequest& r) {
  const CudaContext* c = &cuda_context_of(r);
  const ParamActivationGradPlan plan = param_activation_grad_plan(r.node, r.inputs, r.needs_grad);
  const int64_t n = numel(r.outputs[0].shape);
  return make_grad_choice("elementwise kernel", [=](const GradArgs& a) {
    if (!a.d_inputs[0]) return;
    launch_param_activation_grad(a.in(0), a.out(0), a.d_outputs[0], a.d_inputs[0], n, plan.slope,
                                 plan.min_input ? a.in(kClipMin) : nullptr, plan.max_input ? a.in(kClipMax) : nullptr,
                                 c->stream);
  });
}

}  // namespace

void register_cuda_param_activation_grad_kernels(KernelRegistry& r, const CudaContext&) {
  for (const char* op : {"LeakyRelu", "Elu", "Selu", "Clip"}) r.at(op).with_gradient(plan_param_activation_grad);
}

}  // namespace dnnx::cuda
