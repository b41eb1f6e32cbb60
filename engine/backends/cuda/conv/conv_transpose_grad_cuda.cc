// ConvTranspose's gradient on cuDNN, mirroring conv_transpose_grad_cpu.cc: the adjoint Conv's
// (conv_transpose_layout.h) forward and filter gradient,
//   dX = cudnnConvolutionForward(dY, W)             algorithm: the planner's, fwd direction
//   dW = cudnnConvolutionBackwardFilter(dY, X)      algorithm: the planner's, bwd filter direction
//   dB = the direct bias-gradient kernel (direct_conv_grad.h: cuDNN's cudnnConvolutionBackwardBias
//        with DNNX_PROBE_DIRECT_CONV_GRAD=0, Note [direct conv gradients])
// each direction chosen by conv_algo.h's one policy, as the Conv gradient's are; only the
// gradients asked for are planned. Asymmetric pads: dY is padded first (the pad kernel), and
// both directions read the padded dY. Workspace: [padded dY][the algorithms' own].
#include <algorithm>

#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/conv/conv_transpose_layout.h"
#include "backends/cuda/conv/direct_conv_grad.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/runtime/tensor_desc.h"
#include "backends/cuda/train/zero_grad_kernel.h"

namespace dnnx::cuda {

namespace {

enum ConvTransposeInput : size_t { kX = 0, kW = 1, kB = 2 };

struct PlannedDirection {
  ConvDescriptors d;
  ConvSearchChoice choice;
};

class ConvTransposeGradKernel final : public GradKernel {
 public:
  ConvTransposeGradKernel(const CudaContext& ctx, std::unique_ptr<PlannedDirection> data,
                          std::unique_ptr<PlannedDirection> filter, ExplicitPad pad, bool bias, const Shape& dy_dims,
                          bool direct_bias)
      : ctx_(ctx),
        data_(std::move(data)),
        filter_(std::move(filter)),
        pad_(pad),
        bias_(bias),
        direct_bias_(direct_bias),
        images_(dy_dims[0]),
        filters_(dy_dims[1]),
        plane_(numel(Shape(dy_dims.begin() + 2, dy_dims.end()))) {
    if (bias_) {
      Shape b(dy_dims.size(), 1);  // [1, M, 1, 1(, 1)]
      b[1] = dy_dims[1];
      set_tensor(bias_desc_, b);
      set_tensor(dy_desc_, dy_dims);
    }
  }

  void run(const GradArgs& args) const override {
    const float one = 1.0f, zero = 0.0f;
    const float* dy = args.d_outputs[0];
    auto* workspace = static_cast<uint8_t*>(args.workspace);
    void* algo_workspace = workspace + pad_.bytes;
    if (bias_ && args.d_inputs[kB] && direct_bias_) {
      launch_conv_bias_grad(dy, args.d_inputs[kB], images_, filters_, plane_, algo_workspace, ctx_.stream);
    } else if (bias_ && args.d_inputs[kB]) {
      check(cudnnConvolutionBackwardBias(ctx_.cudnn, &one, dy_desc_, dy, &zero, bias_desc_, args.d_inputs[kB]),
            "cudnnConvolutionBackwardBias");
    }
    if (pad_.needed) {
      float* padded = reinterpret_cast<float*>(workspace);
      launch_pad(dy, padded, pad_.planes, pad_.in, pad_.out, pad_.begin, ctx_.stream);
      dy = padded;
    }
    if (float* dx = args.d_inputs[kX]) {
      const PlannedDirection& f = *data_;
      check(cudnnConvolutionForward(ctx_.cudnn, &one, f.d.x, dy, f.d.w, args.in(kW), f.d.conv,
                                    static_cast<cudnnConvolutionFwdAlgo_t>(f.choice.algo),
                                    f.choice.workspace_bytes ? algo_workspace : nullptr, f.choice.workspace_bytes,
                                    &zero, f.d.y, dx),
            "cudnnConvolutionForward");
    }
    if (float* dw = args.d_inputs[kW]) {
      const PlannedDirection& b = *filter_;
      check(cudnnConvolutionBackwardFilter(ctx_.cudnn, &one, b.d.x, dy, b.d.y, args.in(kX), b.d.conv,
                                           static_cast<cudnnConvolutionBwdFilterAlgo_t>(b.choice.algo),
                                           b.choice.workspace_bytes ? algo_workspace : nullptr,
                                           b.choice.workspace_bytes, &zero, b.d.w, dw),
            "cudnnConvolutionBackwardFilter");
    }
  }

 private:
  const CudaContext& ctx_;
  std::unique_ptr<PlannedDirection> data_, filter_;  // planned only when asked for
  ExplicitPad pad_;
  bool bias_;
  bool direct_bias_;
  int64_t images_, filters_, plane_;  // dY [images, filters, plane]
  TensorDescriptor bias_desc_, dy_desc_;  // dB [1, M, 1, 1(, 1)]; dY unpadded
};

std::unique_ptr<PlannedDirection> plan_direction(const CudaContext& ctx, ConvDirection dir, const ConvLayout& layout,
                                                 size_t limit, const Node& node) {
  auto p = std::make_unique<PlannedDirection>();
  set_conv_descriptors(ctx, layout, p->d);
  p->choice = choose_conv_algorithm(ctx, dir, p->d, limit, node.where());
  return p;
}

void describe(GradChoice& choice, std::string& text, ConvDirection dir, const PlannedDirection& p, Precision precision) {
  text += (text.empty() ? "" : " + ") + std::string(direction_text(dir)) + " " + conv_algo_name(dir, p.choice.algo) +
          " " + conv_math_name(p.choice.math_type, precision) + (p.choice.from_cache ? " (plan cache)" : "");
  for (const Rejected& r : p.choice.rejected) {
    choice.rejected.push_back({std::string(direction_text(dir)) + " " + r.algorithm, r.reason});
  }
}

GradChoice plan_conv_transpose_grad(const GradRequest& r) {
  const CudaContext& ctx = cuda_context_of(r);
  const Shape& xs = r.inputs[kX].info.shape;
  const Shape& ws = r.inputs[kW].info.shape;
  const bool has_bias = r.inputs.size() > kB && r.inputs[kB].present;
  if (numel(r.outputs[0].shape) == 0 || numel(xs) == 0) return zero_grad_choice(ctx, r, "zeros (empty tensors)");
  if (!fits_int(xs) || !fits_int(r.outputs[0].shape)) {
    node_fail<UnsupportedModelError>(r.node, "X " + shape_str(xs) + " or Y " + shape_str(r.outputs[0].shape) +
                                                 " has more than 2^31-1 elements (cuDNN's legacy API limit)");
  }
  const ConvLayout layout = plan_conv_transpose_layout(r.node, xs, ws);
  const size_t limit = ctx.options.workspace_limit;
  if (layout.pad.bytes > limit) {
    throw DeviceError(r.node.where() + ": asymmetric padding needs " + std::to_string(layout.pad.bytes) +
                      " bytes of workspace for the padded dY, over the workspace limit of " + std::to_string(limit));
  }
  GradChoice choice;
  std::unique_ptr<PlannedDirection> data, filter;
  std::string text = layout.pad.needed ? "pad kernel" : "";
  if (r.needs_grad[kX]) {
    data = plan_direction(ctx, ConvDirection::Forward, layout, limit - layout.pad.bytes, r.node);
    describe(choice, text, ConvDirection::Forward, *data, conv_precision(ctx, data->d));
  }
  if (r.needs_grad[kW]) {
    filter = plan_direction(ctx, ConvDirection::BackwardFilter, layout, limit - layout.pad.bytes, r.node);
    describe(choice, text, ConvDirection::BackwardFilter, *filter, conv_precision(ctx, filter->d));
  }
  const bool direct_bias = has_bias && r.needs_grad[kB] && ctx.hooks.direct_conv_grad;
  if (has_bias && r.needs_grad[kB]) {
    text += (text.empty() ? "" : " + ") + std::string(direct_bias ? "bwd bias direct kernel" : "bwd bias");
  }
  choice.algorithm = text;
  Shape dy_dims = r.outputs[0].shape;
  if (dy_dims.size() == 3) dy_dims.insert(dy_dims.begin() + 2, 1);  // 1-D as 2-D, as the layout runs it
  const size_t algo_bytes = std::max({data ? data->choice.workspace_bytes : size_t{0},
                                      filter ? filter->choice.workspace_bytes : size_t{0},
                                      direct_bias ? conv_bias_grad_workspace(dy_dims[0], dy_dims[1]) : size_t{0}});
  choice.workspace_bytes = layout.pad.bytes + algo_bytes;
  choice.kernel = std::make_unique<ConvTransposeGradKernel>(ctx, std::move(data), std::move(filter), layout.pad,
                                                            has_bias, dy_dims, direct_bias);
  return choice;
}

}  // namespace

void register_cuda_conv_transpose_grad_kernels(KernelRegistry& r, const CudaContext&) {
  r.at("ConvTranspose").with_gradient(plan_conv_transpose_grad);
}

}  // namespace dnnx::cuda
