// BatchNormalization (inference) on CUDA, one of the real-world ops of issue #5: per-channel
// scale+shift, the statistics read on the device (batchnorm_kernels.cu, Note [batchnorm by
// vectors]), float32, float16 or bfloat16 (half storage); BatchNormalization+Relu
// (fuse_batchnorm_relu) in the same kernel; both also channels-last ("<op>@NHWC", Note [channels
// last]: X [N, H, W, C] is [N*H*W, C, 1] to the kernel). Training mode (batch statistics, the
// running mean/var outputs) is refused at plan time, so the host's kernel runs it (Note [host fallback]).
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "ops/layout/channels_last.h"

namespace dnnx::cuda {

namespace {

KernelChoice plan_batchnorm(const CudaContext& ctx, bool channels_last, const Node& node,
                            const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  if (outputs.size() > 1) node_fail<UnsupportedModelError>(node, "training mode (running mean/var outputs) is not supported on CUDA");
  const DType dtype = inputs[0].info.dtype;  // then every input has it (half_storage)
  for (size_t i = 0; i < inputs.size(); ++i) require_cuda_floating(node, inputs[i].info, inputs[0].info.dtype, "inputs");
  const Shape& x = inputs[0].info.shape;
  if (x.size() < 2) node_fail<UnsupportedModelError>(node, "X " + shape_str(x) + " has fewer than 2 dims");
  const int64_t channels = channels_last ? x.back() : x[1];
  // channels last: every pixel a batch row of one element per channel
  const int64_t batch = channels_last ? (channels > 0 ? numel(x) / channels : 0) : x[0];
  const int64_t plane = channels_last ? 1 : batch * channels > 0 ? numel(x) / (batch * channels) : 0;
  const float eps = node.attr_float("epsilon", 1e-5f);
  if (node.attr_int("training_mode", 0) != 0) node_fail<UnsupportedModelError>(node, "training_mode=1 is not supported on CUDA");
  const CudaContext* c = &ctx;
  const bool relu = channels_first_op(node.op_type) == "BatchNormalization+Relu";
  return make_choice(relu ? "scale+shift+relu kernel" : "scale+shift kernel", [=](const KernelArgs& a) {
    launch_batchnorm(a.in<void>(0), a.in<void>(1), a.in<void>(2), a.in<void>(3), a.in<void>(4), a.out<void>(0), batch,
                     channels, plane, eps, relu, dtype, c->stream);
  });
}

}  // namespace

void register_cuda_batchnorm_kernels(KernelRegistry& r, const CudaContext& ctx) {
  for (const char* op : {"BatchNormalization", "BatchNormalization+Relu"}) {
    for (const bool channels_last : {false, true}) {
      r.add(channels_last ? std::string(op) + kChannelsLastSuffix : std::string(op),
            [&ctx, channels_last](const Node& node, const std::vector<ValueInfo>& inputs,
                                  const std::vector<TensorInfo>& outputs) {
              return plan_batchnorm(ctx, channels_last, node, inputs, outputs);
            })
          .with_dtypes(kFloatAndHalves);
    }
  }
}

}  // namespace dnnx::cuda
