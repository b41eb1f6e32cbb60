// LeakyRelu, Elu, Selu (issue #15) and Clip on CUDA, real-world ops of issue #5: elementwise kernels
// (param_activation_kernels.cu), float32, float16 or bfloat16 (half storage); Clip's min/max inputs
// are read on the device. int32/int64 Clip is refused at plan time with an
// UnsupportedModelError naming the node (it runs on the CPU only).
#include <limits>

#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "ops/elementwise/param_activation_grad.h"  // kSeluAlpha, kSeluGamma

namespace dnnx::cuda {

namespace {

Factory alpha_factory(const CudaContext& ctx, AlphaKind kind, float default_alpha) {
  return [&ctx, kind, default_alpha](const Node& node, const std::vector<ValueInfo>& inputs,
                                     const std::vector<TensorInfo>&) {
    const DType dtype = inputs[0].info.dtype;
    require_cuda_floating(node, inputs[0].info, inputs[0].info.dtype, "X");
    const float alpha = node.attr_float("alpha", default_alpha);
    const float gamma = node.attr_float("gamma", kSeluGamma);  // Selu's only
    const int64_t n = numel(inputs[0].info.shape);
    const CudaContext* c = &ctx;
    return make_choice("elementwise kernel", [=](const KernelArgs& a) {
      launch_alpha_activation(kind, a.in<void>(0), a.out<void>(0), n, alpha, gamma, dtype, c->stream);
    });
  };
}

KernelChoice plan_clip(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                       const std::vector<TensorInfo>& outputs) {
  require_cuda_floating(node, outputs[0], outputs[0].dtype, "input (int32/int64 Clip runs on the CPU only)");
  const DType dtype = outputs[0].dtype;  // then min and max too (half_storage)
  constexpr int kBoundsAsInputsOpset = 11;
  const bool attrs = node.opset < kBoundsAsInputsOpset;
  const bool min_input = !attrs && inputs.size() > 1 && inputs[1].present;
  const bool max_input = !attrs && inputs.size() > 2 && inputs[2].present;
  float lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
  if (attrs) {
    lo = node.attr_float("min", lo);
    hi = node.attr_float("max", hi);
  }
  const int64_t n = numel(outputs[0].shape);
  const CudaContext* c = &ctx;
  return make_choice("elementwise kernel", [=](const KernelArgs& a) {
    launch_clip(a.in<void>(0), a.out<void>(0), n, lo, hi, min_input ? a.in<void>(1) : nullptr,
                max_input ? a.in<void>(2) : nullptr, dtype, c->stream);
  });
}

}  // namespace

void register_cuda_param_activation_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("LeakyRelu", alpha_factory(ctx, AlphaKind::LeakyRelu, 0.01f)).with_dtypes(kFloatAndHalves);
  r.add("Elu", alpha_factory(ctx, AlphaKind::Elu, 1.0f)).with_dtypes(kFloatAndHalves);
  r.add("Selu", alpha_factory(ctx, AlphaKind::Selu, kSeluAlpha)).with_dtypes(kFloatAndHalves);
  r.add("Clip", bind(ctx, plan_clip)).with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda
