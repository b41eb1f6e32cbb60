// Conv's gradient on cuDNN, NCHW (NCDHW) float32, mirroring conv_grad_cpu.cc:
//   dX = cudnnConvolutionBackwardData(W, dY)       algorithm: the planner's, bwd data direction
//   dW = cudnnConvolutionBackwardFilter(X, dY)     algorithm: the planner's, bwd filter direction
//   dB = cudnnConvolutionBackwardBias(dY)
// Where they are faster (direct_conv_grad.h, Note [direct conv gradients]), the direct kernels
// take over: dB of every conv (cuDNN's takes one block per channel), and dW of a small 2-D (or
// 1-D) conv of group 1. Both are deterministic.
// Each direction is chosen by conv_algo.h's one policy (heuristic / exhaustive with the plan
// cache / deterministic / workspace limit / math per precision), each on its own convolution
// descriptor (the two may run different math types at tf32); both share one workspace. Only
// the gradients asked for are planned. The layout is the forward's (conv_layout.h): 1-D convs as
// 2-D with a unit height; where ONNX's pads differ between the two ends the forward zero-pads X
// explicitly, so here dW reads that padded X (the pad kernel, again) and dX is computed for the
// padded X and cropped back (the gather kernel).
//
// Workspace: [padded X][padded dX][the algorithms' own, or the direct kernels' partial sums], the first two only
// when padding is explicit.
#include <algorithm>
#include <climits>

#include "backends/cuda/backend/cuda_kernels.h"

#include "backends/cuda/conv/conv_layout.h"
#include "backends/cuda/conv/direct_conv_grad.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/runtime/tensor_desc.h"
#include "backends/cuda/train/zero_grad_kernel.h"

namespace dnnx::cuda {

namespace {

enum ConvInput : size_t { kX = 0, kW = 1, kB = 2 };

// One planned backward direction: its descriptors (with the chosen math type set) and algorithm.
struct PlannedDirection {
  bool planned = false;
  ConvDescriptors d;
  ConvSearchChoice choice;
};

class ConvGradKernel final : public GradKernel {
 public:
  // `direct`: the direct filter kernel's shape, when dW is wanted and no cuDNN algorithm is planned
  // for it; `direct_bias`: dB by the direct kernel (launch_conv_bias_grad) rather than cuDNN's.
  ConvGradKernel(const CudaContext& ctx, std::unique_ptr<PlannedDirection> data,
                 std::unique_ptr<PlannedDirection> filter, ExplicitPad pad, bool bias, const Shape& y_dims,
                 const DirectConvGrad2d& direct, bool direct_bias)
      : ctx_(ctx),
        data_(std::move(data)),
        filter_(std::move(filter)),
        pad_(pad),
        bias_(bias),
        direct_(direct),
        direct_bias_(direct_bias),
        images_(y_dims[0]),
        filters_(y_dims[1]),
        plane_(numel(Shape(y_dims.begin() + 2, y_dims.end()))) {
    if (bias_) {
      Shape b(y_dims.size(), 1);  // [1, M, 1, 1(, 1)]
      b[1] = y_dims[1];
      set_tensor(bias_desc_, b);
      set_tensor(dy_desc_, y_dims);
    }
    if (pad_.needed) {
      // dX [planes, in...] = the padded dX [planes, out...] from `begin` on.
      crop_.rank = 4;
      const int64_t sizes[4] = {pad_.planes, pad_.in[0], pad_.in[1], pad_.in[2]};
      const int64_t strides[4] = {pad_.out[0] * pad_.out[1] * pad_.out[2], pad_.out[1] * pad_.out[2], pad_.out[2], 1};
      for (int i = 0; i < 4; ++i) {
        crop_.size[i] = sizes[i];
        crop_.stride_a[i] = strides[i];
      }
      crop_offset_ = pad_.begin[0] * strides[1] + pad_.begin[1] * strides[2] + pad_.begin[2];
      crop_count_ = sizes[0] * sizes[1] * sizes[2] * sizes[3];
    }
  }

  void run(const GradArgs& args) const override {
    const float one = 1.0f, zero = 0.0f;
    const float* dy = args.d_outputs[0];
    auto* workspace = static_cast<uint8_t*>(args.workspace);
    float* padded_x = reinterpret_cast<float*>(workspace);
    float* padded_dx = reinterpret_cast<float*>(workspace + pad_.bytes);
    void* algo_workspace = workspace + 2 * pad_.bytes;

    if (float* dw = args.d_inputs[kW]; dw && !filter_) {
      launch_direct_filter_grad(args.in(kX), dy, dw, algo_workspace, direct_, ctx_.stream);
    } else if (dw) {
      const PlannedDirection& f = *filter_;
      const float* x = args.in(kX);
      if (pad_.needed) {
        launch_pad(x, padded_x, pad_.planes, pad_.in, pad_.out, pad_.begin, ctx_.stream);
        x = padded_x;
      }
      check(cudnnConvolutionBackwardFilter(ctx_.cudnn, &one, f.d.x, x, f.d.y, dy, f.d.conv,
                                           static_cast<cudnnConvolutionBwdFilterAlgo_t>(f.choice.algo),
                                           f.choice.workspace_bytes ? algo_workspace : nullptr,
                                           f.choice.workspace_bytes, &zero, f.d.w, dw),
            "cudnnConvolutionBackwardFilter");
    }
    if (bias_ && args.d_inputs[kB] && direct_bias_) {
      launch_conv_bias_grad(dy, args.d_inputs[kB], images_, filters_, plane_, algo_workspace, ctx_.stream);
    } else if (bias_ && args.d_inputs[kB]) {
      check(cudnnConvolutionBackwardBias(ctx_.cudnn, &one, dy_desc_, dy, &zero, bias_desc_, args.d_inputs[kB]),
            "cudnnConvolutionBackwardBias");
    }
    if (float* dx = args.d_inputs[kX]) {
      const PlannedDirection& b = *data_;
      float* target = pad_.needed ? padded_dx : dx;
      check(cudnnConvolutionBackwardData(ctx_.cudnn, &one, b.d.w, args.in(kW), b.d.y, dy, b.d.conv,
                                         static_cast<cudnnConvolutionBwdDataAlgo_t>(b.choice.algo),
                                         b.choice.workspace_bytes ? algo_workspace : nullptr, b.choice.workspace_bytes,
                                         &zero, b.d.x, target),
            "cudnnConvolutionBackwardData");
      if (pad_.needed) launch_gather(padded_dx + crop_offset_, dx, sizeof(float), crop_count_, crop_, ctx_.stream);
    }
  }

 private:
  const CudaContext& ctx_;
  std::unique_ptr<PlannedDirection> data_, filter_;  // planned only when asked for (and dW not direct)
  ExplicitPad pad_;
  bool bias_;
  DirectConvGrad2d direct_;
  bool direct_bias_;
  int64_t images_, filters_, plane_;  // dY [images, filters, plane]
  TensorDescriptor bias_desc_, dy_desc_;  // dB [1, M, 1, 1(, 1)]; dY packed (its math type is irrelevant)
  BroadcastDims crop_;
  int64_t crop_offset_ = 0, crop_count_ = 0;
};

std::unique_ptr<PlannedDirection> plan_direction(const CudaContext& ctx, ConvDirection dir, const ConvLayout& layout,
                                                 size_t limit, const Node& node) {
  auto p = std::make_unique<PlannedDirection>();
  set_conv_descriptors(ctx, layout, p->d);
  p->choice = choose_conv_algorithm(ctx, dir, p->d, limit, node.where());
  p->planned = true;
  return p;
}

// "BWD_DATA_ALGO_1 fp32 (CUDNN_FMA_MATH)" (+ " (plan cache)").
std::string direction_summary(ConvDirection dir, const PlannedDirection& p, Precision precision) {
  return conv_algo_name(dir, p.choice.algo) + " " + conv_math_name(p.choice.math_type, precision) +
         (p.choice.from_cache ? " (plan cache)" : "");
}

// The direct filter kernel's shape for this conv (n == 0 where it cannot take it: another
// precision or layout, a 3-D window, groups, or the probe's switch off); the kernel then checks its fit.
DirectConvGrad2d direct_grad_shape(const CudaContext& ctx, const ConvLayout& layout, const Shape& xs, const Shape& ws) {
  DirectConvGrad2d d;
  const ConvGeometry& g = layout.g;
  if (!ctx.hooks.direct_conv_grad || layout.dtype != DType::Float32 || layout.channels_last || g.rank() != 2 ||
      g.group != 1 || !fits_int(g.input) || !fits_int(g.output) || xs[1] > INT_MAX || ws[0] > INT_MAX) {
    return d;
  }
  auto i = [](int64_t v) { return static_cast<int>(v); };
  d.c = i(xs[1]);
  d.h = i(g.input[0]);
  d.w = i(g.input[1]);
  d.m = i(ws[0]);
  d.oh = i(g.output[0]);
  d.ow = i(g.output[1]);
  d.kh = i(g.kernel[0]);
  d.kw = i(g.kernel[1]);
  d.sh = i(g.strides[0]);
  d.sw = i(g.strides[1]);
  d.dh = i(g.dilations[0]);
  d.dw = i(g.dilations[1]);
  d.ph = i(g.pads_begin[0]);
  d.pw = i(g.pads_begin[1]);
  d.n = xs[0];
  return d;
}

constexpr const char* kDirectGradMath = "fp32 FMA, deterministic";

void add_rejected(GradChoice& choice, ConvDirection dir, const PlannedDirection& p) {
  for (const Rejected& r : p.choice.rejected) {
    choice.rejected.push_back({std::string(direction_text(dir)) + " " + r.algorithm, r.reason});
  }
}

GradChoice plan_conv_grad(const GradRequest& r) {
  const CudaContext& ctx = cuda_context_of(r);
  const Shape& xs = r.inputs[kX].info.shape;
  const Shape& ws = r.inputs[kW].info.shape;
  const bool has_bias = r.inputs.size() > kB && r.inputs[kB].present;
  const bool want_x = r.needs_grad[kX], want_w = r.needs_grad[kW], want_b = has_bias && r.needs_grad[kB];
  // An empty Y: nothing reaches X, W or B.
  if (numel(r.outputs[0].shape) == 0) return zero_grad_choice(ctx, r, "zeros (empty output)");
  GradChoice choice;
  if (!fits_int(xs) || !fits_int(r.outputs[0].shape)) {
    node_fail<UnsupportedModelError>(r.node, "X " + shape_str(xs) + " or Y " + shape_str(r.outputs[0].shape) +
                                                 " has more than 2^31-1 elements (cuDNN's legacy API limit)");
  }
  const ConvLayout layout = plan_conv_layout(r.node, xs, ws);
  const ExplicitPad& pad = layout.pad;
  const size_t limit = ctx.options.workspace_limit;
  const size_t pad_bytes = 2 * pad.bytes;  // padded X and padded dX
  if (pad_bytes > limit) {
    throw DeviceError(r.node.where() + ": asymmetric padding needs " + std::to_string(pad_bytes) +
                      " bytes of workspace for the padded X and dX, over the workspace limit of " +
                      std::to_string(limit));
  }
  std::unique_ptr<PlannedDirection> data, filter;
  std::string text;
  const DirectConvGrad2d direct = direct_grad_shape(ctx, layout, xs, ws);
  const bool direct_w = want_w && direct_filter_grad_supported(direct);
  const bool direct_bias = want_b && ctx.hooks.direct_conv_grad;
  const Shape& ys = layout.y_dims;
  size_t direct_bytes = direct_bias ? conv_bias_grad_workspace(ys[0], ys[1]) : 0;
  if (want_x) {
    data = plan_direction(ctx, ConvDirection::BackwardData, layout, limit - pad_bytes, r.node);
    text = "bwd data " + direction_summary(ConvDirection::BackwardData, *data, conv_precision(ctx, data->d));
    add_rejected(choice, ConvDirection::BackwardData, *data);
  }
  if (direct_w) {
    text += (text.empty() ? "" : " + ") + std::string("bwd filter direct kernel (") + kDirectGradMath + ")";
    direct_bytes = std::max(direct_bytes, direct_filter_grad_workspace(direct));
    choice.rejected.push_back({"bwd filter cuDNN", "not planned: the direct kernel takes this shape "
                                                   "(Note [direct conv gradients])"});
  } else if (want_w) {
    filter = plan_direction(ctx, ConvDirection::BackwardFilter, layout, limit - pad_bytes, r.node);
    text += (text.empty() ? "" : " + ") + std::string("bwd filter ") +
            direction_summary(ConvDirection::BackwardFilter, *filter, conv_precision(ctx, filter->d));
    add_rejected(choice, ConvDirection::BackwardFilter, *filter);
  }
  if (want_b) text += (text.empty() ? "" : " + ") + std::string(direct_bias ? "bwd bias direct kernel" : "bwd bias");
  if (pad.needed && (data || filter)) text = "pad kernel + " + text + " + crop";
  choice.algorithm = text;
  const size_t algo_bytes = std::max({direct_bytes, data ? data->choice.workspace_bytes : size_t{0},
                                      filter ? filter->choice.workspace_bytes : size_t{0}});
  choice.workspace_bytes = (pad.needed ? pad_bytes : 0) + algo_bytes;
  choice.kernel = std::make_unique<ConvGradKernel>(ctx, std::move(data), std::move(filter), pad, has_bias,
                                                   layout.y_dims, direct, direct_bias);
  return choice;
}

}  // namespace

void register_cuda_conv_grad_kernels(KernelRegistry& r, const CudaContext&) { r.at("Conv").with_gradient(plan_conv_grad); }

}  // namespace dnnx::cuda
