// Transpose+Pad on CUDA (ops/channels_last.h; made by the channels_last pass, Note [padded
// channels]): X [N, C, H, W] -> Y [N, H, W, C'], zeros past C, in one pass over memory
// (transpose_pad_kernels.cu) instead of the gather kernel's Transpose and then the pad kernel.
#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "ops/channels_last.h"

namespace dnnx::cuda {

namespace {

class TransposePadKernel final : public Kernel {
 public:
  TransposePadKernel(const CudaContext& ctx, size_t elem, const Shape& x, int64_t padded)
      : ctx_(ctx), elem_(elem), batch_(x[0]), hw_(x[2] * x[3]), channels_(static_cast<int>(x[1])),
        padded_(static_cast<int>(padded)) {}

  void run(const KernelArgs& args) const override {
    launch_transpose_pad(args.in<void>(0), args.out<void>(0), elem_, batch_, hw_, channels_, padded_, ctx_.stream);
  }

 private:
  const CudaContext& ctx_;
  size_t elem_;
  int64_t batch_, hw_;
  int channels_, padded_;
};

KernelChoice plan_transpose_pad(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                                const std::vector<TensorInfo>& outputs) {
  const TensorInfo& x = inputs[0].info;
  const int64_t padded = outputs[0].shape[3];
  if (padded > 1024) node_fail<UnsupportedModelError>(node, "pads the channels to more than 1024");
  KernelChoice choice;
  choice.algorithm = "transpose+pad kernel (" + std::to_string(x.shape[1]) + " -> " + std::to_string(padded) +
                     " channels, zeros)";
  choice.kernel = std::make_unique<TransposePadKernel>(ctx, dtype_size(x.dtype), x.shape, padded);
  return choice;
}

}  // namespace

void register_cuda_transpose_pad_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add(kTransposePadOp, [&ctx](const Node& node, const std::vector<ValueInfo>& inputs,
                                const std::vector<TensorInfo>& outputs) {
     return plan_transpose_pad(ctx, node, inputs, outputs);
   }).with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda
