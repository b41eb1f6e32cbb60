// ConvTranspose on cuDNN, NCHW (NCDHW) float32: the data gradient of its adjoint Conv
// (ops/conv/conv_transpose.h, conv_transpose_layout.h),
//   Y = cudnnConvolutionBackwardData(W, X)  (+ B: cudnnAddTensor)
// its algorithm chosen by conv_algo.h's one policy in the bwd data direction (heuristic, or
// exhaustive with the plan cache; deterministic; workspace limit; math per precision), as the
// Conv gradient's dX is. Asymmetric pads: the padded Y is computed into the workspace and
// cropped (the gather kernel). Workspace: [padded Y][the algorithm's own].
#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/conv/conv_transpose_layout.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/runtime/tensor_desc.h"
#include "backends/cuda/search/plan_cache.h"
#include "ops/conv/conv_transpose.h"

namespace dnnx::cuda {

ConvLayout plan_conv_transpose_layout(const Node& node, const Shape& xs, const Shape& ws) {
  const ConvGeometry g = conv_transpose_geometry(node, Shape(xs.begin() + 2, xs.end()), Shape(ws.begin() + 2, ws.end()));
  Shape ys{xs[0], ws[1] * g.group};  // the adjoint's input: Y [N, M, out...]
  ys.insert(ys.end(), g.input.begin(), g.input.end());
  return plan_conv_layout(node, g, ys, ws);
}

namespace {

class ConvTransposeKernel final : public Kernel {
 public:
  ConvTransposeKernel(const CudaContext& ctx, std::unique_ptr<ConvDescriptors> d, ConvSearchChoice algo,
                      ExplicitPad pad, bool has_bias, const Shape& y_dims)
      : ctx_(ctx), d_(std::move(d)), algo_(std::move(algo)), pad_(pad), crop_(pad_crop(pad)), has_bias_(has_bias) {
    set_tensor(y_desc_, y_dims);  // the unpadded Y
    if (has_bias_) {
      Shape b(y_dims.size(), 1);  // [1, M, 1, 1(, 1)]
      b[1] = y_dims[1];
      set_tensor(bias_desc_, b);
    }
  }

  void run(const KernelArgs& args) const override {
    const float one = 1.0f, zero = 0.0f;
    auto* workspace = static_cast<uint8_t*>(args.workspace);
    float* y = args.out(0);
    float* target = pad_.needed ? reinterpret_cast<float*>(workspace) : y;
    void* algo_workspace = workspace + (pad_.needed ? pad_.bytes : 0);
    check(cudnnConvolutionBackwardData(ctx_.cudnn, &one, d_->w, args.in(1), d_->y, args.in(0), d_->conv,
                                       static_cast<cudnnConvolutionBwdDataAlgo_t>(algo_.algo),
                                       algo_.workspace_bytes ? algo_workspace : nullptr, algo_.workspace_bytes, &zero,
                                       d_->x, target),
          "cudnnConvolutionBackwardData");
    if (pad_.needed) launch_gather(target + crop_.offset, y, sizeof(float), crop_.count, crop_.dims, ctx_.stream);
    if (has_bias_) check(cudnnAddTensor(ctx_.cudnn, &one, bias_desc_, args.in(2), &one, y_desc_, y), "cudnnAddTensor");
  }

 private:
  const CudaContext& ctx_;
  std::unique_ptr<ConvDescriptors> d_;
  ConvSearchChoice algo_;
  ExplicitPad pad_;
  PadCrop crop_;
  bool has_bias_;
  TensorDescriptor y_desc_, bias_desc_;
};

class EmptyKernel final : public Kernel {
 public:
  void run(const KernelArgs&) const override {}
};

KernelChoice plan_conv_transpose(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                                 const std::vector<TensorInfo>& outputs) {
  const Shape& xs = inputs[0].info.shape;
  const Shape& ws = inputs[1].info.shape;
  KernelChoice choice;
  if (numel(outputs[0].shape) == 0 || numel(xs) == 0) {
    choice.algorithm = "none (empty input or output)";
    choice.kernel = std::make_unique<EmptyKernel>();
    return choice;
  }
  if (!fits_int(xs) || !fits_int(outputs[0].shape)) {
    node_fail<UnsupportedModelError>(node, "X " + shape_str(xs) + " or Y " + shape_str(outputs[0].shape) +
                                               " has more than 2^31-1 elements (cuDNN's legacy API limit)");
  }
  const ConvLayout layout = plan_conv_transpose_layout(node, xs, ws);
  const size_t limit = ctx.options.workspace_limit;
  if (layout.pad.bytes > limit) {
    throw DeviceError(node.where() + ": asymmetric padding needs " + std::to_string(layout.pad.bytes) +
                      " bytes of workspace for the padded Y, over the workspace limit of " + std::to_string(limit));
  }
  auto d = std::make_unique<ConvDescriptors>();
  set_conv_descriptors(ctx, layout, *d);
  ConvSearchChoice algo = choose_conv_algorithm(ctx, ConvDirection::BackwardData, *d, limit - layout.pad.bytes,
                                                node.where());
  choice.algorithm = conv_algo_name(ConvDirection::BackwardData, algo.algo) +
                     (layout.pad.needed ? " + crop" : "") + (algo.from_cache ? " (plan cache)" : "");
  choice.math = conv_math_name(algo.math_type, conv_precision(ctx.options.precision, layout.dtype));
  choice.workspace_bytes = layout.pad.bytes + algo.workspace_bytes;
  choice.time_ms = algo.time_ms;
  choice.rejected = plain(algo.rejected);
  Shape y_dims = outputs[0].shape;
  if (y_dims.size() == 3) y_dims.insert(y_dims.begin() + 2, 1);  // 1-D as 2-D, as the layout runs it
  const bool has_bias = inputs.size() > 2 && inputs[2].present;
  choice.kernel = std::make_unique<ConvTransposeKernel>(ctx, std::move(d), std::move(algo), layout.pad, has_bias, y_dims);
  return choice;
}

}  // namespace

void register_cuda_conv_transpose_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("ConvTranspose", bind(ctx, plan_conv_transpose));
}

}  // namespace dnnx::cuda
