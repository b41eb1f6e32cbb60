// IsNaN and IsInf on CUDA (float_math_kernels.cu): X float32, float16 or bfloat16 [..] -> bool
// [..], as backends/cpu/elementwise/float_class_cpu.cc (IsInf: detect_positive and
// detect_negative, both 1 by default).
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/elementwise/float_math_kernels.h"

namespace dnnx::cuda {

namespace {

KernelChoice plan_float_class(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                              const std::vector<TensorInfo>&) {
  const DType dtype = inputs[0].info.dtype;
  require_cuda_floating(node, inputs[0].info, dtype, "X");
  const bool nan = node.op_type == "IsNaN";
  const bool positive = node.attr_int("detect_positive", 1) != 0;
  const bool negative = node.attr_int("detect_negative", 1) != 0;
  const int64_t n = numel(inputs[0].info.shape);
  const CudaContext* c = &ctx;
  return make_choice("elementwise kernel", [=](const KernelArgs& a) {
    launch_float_class(a.in<void>(0), a.out<bool>(0), n, dtype, nan, positive, negative, c->stream);
  });
}

}  // namespace

void register_cuda_float_class_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("IsNaN", bind(ctx, plan_float_class)).with_dtypes(kFloatAndHalves);
  r.add("IsInf", bind(ctx, plan_float_class)).with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda
