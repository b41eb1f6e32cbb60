// ops/elementwise/float_math.h's ops on CUDA (float_math_kernels.cu): the trigonometric and
// hyperbolic functions, Ceil, Floor, Round, Softsign, Celu, ThresholdedRelu, Swish, Sign and
// Shrink, float32, float16 or bfloat16 (float arithmetic), as backends/cpu/elementwise/
// float_math_cpu.cc computes them; the gradient dX = dY * f'(x) (float32) with the CPU's slopes,
// for all but the flat Ceil, Floor, Round and Sign. Sign and Shrink of integers run on the host
// (Note [host fallback]), as the dtypes registered here leave them.
#include "backends/cuda/backend/lambda_grad.h"
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/elementwise/float_math_kernels.h"

namespace dnnx::cuda {

namespace {

KernelChoice plan_float_math(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                             const std::vector<TensorInfo>&) {
  const DType dtype = inputs[0].info.dtype;
  require_cuda_floating(node, inputs[0].info, dtype, "X");
  const FloatMath kind = float_math_kind(node);
  const FloatMathParams params = float_math_params(node);
  const int64_t n = numel(inputs[0].info.shape);
  const CudaContext* c = &ctx;
  return make_choice("elementwise kernel", [=](const KernelArgs& a) {
    launch_float_math(kind, params, a.in<void>(0), a.out<void>(0), n, dtype, c->stream);
  });
}

GradChoice plan_float_math_grad(const GradRequest& r) {
  require_cuda_float(r.node, r.inputs[0].info, "X");
  const FloatMath kind = float_math_kind(r.node);
  const FloatMathParams params = float_math_params(r.node);
  const int64_t n = numel(r.inputs[0].info.shape);
  const CudaContext* c = &cuda_context_of(r);
  return make_grad_choice("elementwise kernel", [=](const GradArgs& a) {
    if (float* dx = a.d_inputs[0]) launch_float_math_grad(kind, params, a.in(0), a.d_outputs[0], dx, n, c->stream);
  });
}

}  // namespace

void register_cuda_float_math_kernels(KernelRegistry& r, const CudaContext& ctx) {
  for (const char* op : {"Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh",
                         "Softsign", "Celu", "ThresholdedRelu", "Swish", "Shrink"}) {
    r.add(op, bind(ctx, plan_float_math)).with_dtypes(kFloatAndHalves).with_gradient(plan_float_math_grad);
  }
  for (const char* op : {"Ceil", "Floor", "Round", "Sign"}) {  // flat: no gradient
    r.add(op, bind(ctx, plan_float_math)).with_dtypes(kFloatAndHalves);
  }
}

}  // namespace dnnx::cuda
