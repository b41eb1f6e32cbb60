// The trigonometric and hyperbolic functions on CUDA (float_math_kernels.cu): Sin, Cos, Tan,
// Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, forward only, float32, float16 or bfloat16
// (float arithmetic), as backends/cpu/elementwise/float_math_cpu.cc computes them. Their
// gradients are the CPU's only: a trainable tail holding one fine-tunes on the CPU.
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

}  // namespace

void register_cuda_float_math_kernels(KernelRegistry& r, const CudaContext& ctx) {
  for (const char* op : {"Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh"}) {
    r.add(op, bind(ctx, plan_trig)).with_dtypes(kFloatAndHalves);
  }
}

}  // namespace dnnx::cuda
