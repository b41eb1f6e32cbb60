// AveragePool on CUDA, one of the real-world ops of issue #5: a direct kernel with ONNX's
// divisor (count_include_pad, ceil_mode, dilations, asymmetric pads; avg_pool_kernels.cu),
// float32, float16 or bfloat16 (half storage). cudnnPoolingForward is not used: the plan says why.
// "AveragePool@NHWC" (Note [channels last]): the same kernel over X [N, H, W, C], the channel innermost.
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/pool/max_pool_layout.h"
#include "ops/conv/conv_geometry.h"
#include "ops/layout/channels_last.h"

namespace dnnx::cuda {

namespace {

KernelChoice plan_avg_pool(const CudaContext& ctx, bool channels_last, const Node& node,
                           const std::vector<ValueInfo>& inputs) {
  const DType dtype = inputs[0].info.dtype;
  require_cuda_floating(node, inputs[0].info, inputs[0].info.dtype, "X");
  // ONNX's dims; a channels-last X arrives as [N, H, W, C]
  const Shape x = channels_last ? to_channels_first(inputs[0].info.shape) : inputs[0].info.shape;
  const ConvGeometry onnx = make_conv_geometry(node, WindowOp::Pool, Shape(x.begin() + 2, x.end()),
                                               node.attr_ints("kernel_shape", {}));
  Window3d w = pool_window(onnx, x);  // planes N*C
  const int64_t channels = channels_last ? x[1] : 1;
  if (channels_last) w.planes = x[0];
  const ConvGeometry g = onnx.expanded_to(3);
  int64_t pad_end[3];
  for (size_t i = 0; i < 3; ++i) pad_end[i] = g.pads_end[i];
  const bool include_pad = node.attr_int("count_include_pad", 0) != 0;
  const CudaContext* c = &ctx;
  KernelChoice choice = make_choice("direct kernel", [=](const KernelArgs& a) {
    launch_avg_pool(a.in<void>(0), a.out<void>(0), w, pad_end, include_pad, dtype, c->stream, channels);
  });
  choice.rejected.push_back({"cudnnPoolingForward", "the direct kernel follows ONNX's divisor for every geometry"});
  return choice;
}

}  // namespace

void register_cuda_avg_pool_kernels(KernelRegistry& r, const CudaContext& ctx) {
  for (const bool channels_last : {false, true}) {
    r.add(channels_last ? std::string("AveragePool") + kChannelsLastSuffix : "AveragePool",
          [&ctx, channels_last](const Node& node, const std::vector<ValueInfo>& inputs,
                                const std::vector<TensorInfo>&) {
            return plan_avg_pool(ctx, channels_last, node, inputs);
          })
        .with_dtypes(kFloatAndHalves);
  }
}

}  // namespace dnnx::cuda
