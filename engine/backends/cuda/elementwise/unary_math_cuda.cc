// Exp, Log, Sqrt, Reciprocal, Erf, Gelu, HardSigmoid, HardSwish, Softplus, Mish on CUDA, forward
// (float32, float16 or bfloat16) and gradient (float32) side by side, mirroring backends/cpu/
// unary_math_cpu.cc through the same formulas (ops/elementwise/unary_math.h); also Abs's float gradient
// (its forward is activation_cuda.cc's typed kernel).
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/elementwise/unary_math_kernels.h"

namespace dnnx::cuda {

namespace {

KernelChoice plan_unary_math(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                             const std::vector<TensorInfo>&) {
  require_cuda_floating(node, inputs[0].info, inputs[0].info.dtype, "X");
  const DType dtype = inputs[0].info.dtype;
  const UnaryMath kind = unary_math_kind(node);
  const UnaryParams params = unary_math_params(node);
  const int64_t n = numel(inputs[0].info.shape);
  const CudaContext* c = &ctx;
  return make_choice("elementwise kernel", [=](const KernelArgs& a) {
    launch_unary_math(kind, params, a.in<void>(0), a.out<void>(0), n, dtype, c->stream);
  });
}

class UnaryMathGradKernel final : public GradKernel {
 public:
  UnaryMathGradKernel(const CudaContext& ctx, UnaryMath kind, UnaryParams params, int64_t n)
      : ctx_(ctx), kind_(kind), params_(params), n_(n) {}
  void run(const GradArgs& args) const override {
    if (float* dx = args.d_inputs[0]) {
      launch_unary_math_grad(kind_, params_, args.in(0), args.out(0), args.d_outputs[0], dx, n_, ctx_.stream);
    }
  }

 private:
  const CudaContext& ctx_;
  UnaryMath kind_;
  UnaryParams params_;
  int64_t n_;
};

GradChoice plan_unary_math_grad(const GradRequest& r) {
  require_cuda_float(r.node, r.inputs[0].info, "X");
  GradChoice choice;
  choice.algorithm = "elementwise kernel";
  choice.kernel = std::make_unique<UnaryMathGradKernel>(cuda_context_of(r), unary_math_kind(r.node),
                                                        unary_math_params(r.node), numel(r.inputs[0].info.shape));
  return choice;
}

}  // namespace

void register_cuda_unary_math_kernels(KernelRegistry& r, const CudaContext& ctx) {
  for (const char* op : {"Exp", "Log", "Sqrt", "Reciprocal", "Erf", "Gelu", "HardSigmoid", "HardSwish", "Softplus",
                         "Mish"}) {
    r.add(op, bind(ctx, plan_unary_math)).with_dtypes(kFloatAndHalves).with_gradient(plan_unary_math_grad);
  }
  r.at("Abs").with_gradient(plan_unary_math_grad);  // float Abs (the forward: activation_cuda.cc)
}

}  // namespace dnnx::cuda
