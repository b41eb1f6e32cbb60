// Transpose+Pad on CUDA (ops/layout/channels_last.h; made by the channels_last pass, Note [padded
// channels]): X [N, C, H, W] -> Y [N, H, W, C'], zeros past C, in one pass over memory
// (transpose_pad_kernels.cu) instead of the gather kernel's Transpose and then the pad kernel.
// Transpose+SpaceToDepth (Note [space to depth]) the same way: X's 2x2 blocks as 16 channels.
#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "ops/layout/channels_last.h"

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
  // Any width: the scalar kernel loops over the padded channels of its pixel. (A bound of 1024
  // here once refused timm's RexNet at fp16, a node the channels_last pass had already made: a
  // pass's node must plan wherever the pass's can_run let it be made.)
  if (padded > (int64_t{1} << 30)) node_fail<UnsupportedModelError>(node, "pads the channels to more than 2^30");
  KernelChoice choice;
  choice.algorithm = "transpose+pad kernel (" + std::to_string(x.shape[1]) + " -> " + std::to_string(padded) +
                     " channels, zeros)";
  choice.kernel = std::make_unique<TransposePadKernel>(ctx, dtype_size(x.dtype), x.shape, padded);
  return choice;
}

class SpaceToDepthKernel final : public Kernel {
 public:
  SpaceToDepthKernel(const CudaContext& ctx, DType in, DType out, SpaceToDepthDims dims)
      : ctx_(ctx), in_(in), out_(out), dims_(dims) {}

  void run(const KernelArgs& args) const override {
    launch_space_to_depth(args.in<void>(0), args.out<void>(0), in_, out_, dims_, ctx_.stream);
  }

 private:
  const CudaContext& ctx_;
  DType in_, out_;  // float32 -> half where it folds the entry Cast (Note [entry cast])
  SpaceToDepthDims dims_;
};

KernelChoice plan_space_to_depth(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                                 const std::vector<TensorInfo>& outputs) {
  const Shape& x = inputs[0].info.shape;
  const Shape& y = outputs[0].shape;
  const std::vector<int64_t> pads = node.attr_ints("pads", {});
  bool fits = y[3] == 16;
  for (int64_t v : {x[1], x[2], x[3], y[1], y[2], pads[0], pads[1]}) fits = fits && v <= (int64_t{1} << 30);
  if (!fits) node_fail<UnsupportedModelError>(node, "the space-to-depth kernel takes 16 channels and dims below 2^30");
  SpaceToDepthDims d;
  d.batch = x[0];
  d.c = static_cast<int>(x[1]);
  d.h = static_cast<int>(x[2]);
  d.w = static_cast<int>(x[3]);
  d.hs = static_cast<int>(y[1]);
  d.ws = static_cast<int>(y[2]);
  d.top = static_cast<int>(pads[0]);
  d.left = static_cast<int>(pads[1]);
  d.depth = static_cast<int>(y[3]);
  const DType in = inputs[0].info.dtype, out = outputs[0].dtype;
  KernelChoice choice;
  choice.algorithm = "space-to-depth kernel (2x2 blocks of " + std::to_string(x[1]) + " channels as 16, zeros" +
                     (in == out ? "" : std::string(", ") + dtype_name(in) + " -> " + dtype_name(out)) + ")";
  choice.kernel = std::make_unique<SpaceToDepthKernel>(ctx, in, out, d);
  return choice;
}

}  // namespace

void register_cuda_transpose_pad_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add(kTransposePadOp, [&ctx](const Node& node, const std::vector<ValueInfo>& inputs,
                                const std::vector<TensorInfo>& outputs) {
     return plan_transpose_pad(ctx, node, inputs, outputs);
   }).with_dtypes(kFloatAndHalves);
  r.add(kSpaceToDepthOp, [&ctx](const Node& node, const std::vector<ValueInfo>& inputs,
                                const std::vector<TensorInfo>& outputs) {
     return plan_space_to_depth(ctx, node, inputs, outputs);
   }).with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda
