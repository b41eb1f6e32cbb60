// The trigonometric and hyperbolic functions on CUDA (float_math_kernels.cu): Sin, Cos, Tan,
// Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, float32, float16 or bfloat16
// (float arithmetic), as backends/cpu/elementwise/float_math_cpu.cc computes them; the gradient
// dX = dY * f'(x) (float32) with the CPU's slopes.
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/elementwise/float_math_kernels.h"

namespace dnnx::cuda {

namespace {

KernelChoice plan_trig(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                       const std::vector<TensorInfo>&) {
  const DType dtype = inputs[0].info.dtype;
  require_cuda_floating(node, inputs[0].info, dtype, "X");
  const FloatMath kind = float_math_kind(node);
  const int64_t n = numel(inputs[0].info.shape);
  const CudaContext* c = &ctx;
  return make_choice("elementwise kernel", [=](const KernelArgs& a) {
    launch_trig(kind, a.in<void>(0), a.out<void>(0), n, dtype, c->stream);
  });
}

class TrigGradKernel final : public GradKernel {
 public:
  TrigGradKernel(const CudaContext& ctx, FloatMath kind, int64_t n) : ctx_(ctx), kind_(kind), n_(n) {}
  void run(const GradArgs& args) const override {
    if (float* dx = args.d_inputs[0]) launch_trig_grad(kind_, args.in(0), args.d_outputs[0], dx, n_, ctx_.stream);
  }

 private:
  const CudaContext& ctx_;
  FloatMath kind_;
  int64_t n_;
};

GradChoice plan_trig_grad(const GradRequest& r) {
  require_cuda_float(r.node, r.inputs[0].info, "X");
  GradChoice choice;
  choice.algorithm = "elementwise kernel";
  choice.kernel = std::make_unique<TrigGradKernel>(cuda_context_of(r), float_math_kind(r.node),
                                                   numel(r.inputs[0].info.shape));
  return choice;
}

}  // namespace

void register_cuda_float_math_kernels(KernelRegistry& r, const CudaContext& ctx) {
  for (const char* op : {"Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh"}) {
    r.add(op, bind(ctx, plan_trig)).with_dtypes(kFloatAndHalves).with_gradient(plan_trig_grad);
  }
}

}  // namespace dnnx::cuda
