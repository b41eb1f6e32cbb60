// LRN on CUDA, one of the real-world ops of issue #5: a direct kernel across channels, alpha /
// size as ONNX means it (lrn_kernels.cu), float32, float16 or bfloat16 (half storage).
// cudnnLRNCrossChannelForward is not used: the plan says why.
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/layout/glue_kernels.h"

namespace dnnx::cuda {

namespace {

KernelChoice plan_lrn(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                      const std::vector<TensorInfo>&) {
  const DType dtype = inputs[0].info.dtype;
  require_cuda_floating(node, inputs[0].info, inputs[0].info.dtype, "X");
  const Shape& x = inputs[0].info.shape;
  const int64_t batch = x[0], channels = x[1];
  const int64_t plane = batch * channels > 0 ? numel(x) / (batch * channels) : 0;
  const int64_t size = node.attr_int("size", 1);
  const float alpha = node.attr_float("alpha", 1e-4f), beta = node.attr_float("beta", 0.75f),
              bias = node.attr_float("bias", 1.0f);
  const CudaContext* c = &ctx;
  KernelChoice choice = make_choice("direct kernel", [=](const KernelArgs& a) {
    launch_lrn(a.in<void>(0), a.out<void>(0), batch, channels, plane, size, alpha, beta, bias, dtype, c->stream);
  });
  choice.rejected.push_back({"cudnnLRNCrossChannelForward", "cuDNN's window is centred (size odd only) and its size is limited to [1, 16]"});
  return choice;
}

}  // namespace

void register_cuda_lrn_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("LRN", bind(ctx, plan_lrn)).with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda
