// MaxPool's gradient on CUDA, taken the way the forward ran (max_pool_layout.h): where cuDNN
// pooled, cudnnPoolingBackward (it finds each window's maximum again from X and the forward's Y,
// kept by the trainer in GradArgs.outputs), in CUDNN_POOLING_MAX_DETERMINISTIC mode so that
// overlapping windows add up in a fixed order; where the direct kernel pooled (dilations,
// asymmetric pads, ceil_mode), the direct gradient kernel (grad_kernels.h), which gives each dY
// to its window's first maximum exactly as the CPU does. 1-D pools run as 2-D with a unit height.
// Before both, the common 2x2 stride-2 pool on even planes takes its own kernel (Note [2x2 pool
// gradient]), with the CPU's rule for ties too.
// AveragePool's gradient is always the direct kernel, as its forward is (avg_pool_cuda.cc: ONNX's
// divisor for every geometry): each dX element gathers dY / divisor of the windows holding it.
#include <algorithm>
#include <array>

#include "backends/cuda/train/grad_kernels.h"
#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/backend/lambda_grad.h"
#include "backends/cuda/pool/max_pool_layout.h"
#include "backends/cuda/runtime/tensor_desc.h"

namespace dnnx::cuda {

namespace {

constexpr size_t kMinSpatialRank = 2;

// Its descriptors are filled at plan time and never change after.
struct CudnnMaxPoolGradKernel final : GradKernel {
  explicit CudnnMaxPoolGradKernel(const CudaContext& context) : ctx(context) {}

  void run(const GradArgs& args) const override {
    if (!args.d_inputs[0]) return;
    const float one = 1.0f, zero = 0.0f;
    check(cudnnPoolingBackward(ctx.cudnn, pool, &one, y, args.out(0), y, args.d_outputs[0], x, args.in(0), &zero, x,
                               args.d_inputs[0]),
          "cudnnPoolingBackward");
  }

  const CudaContext& ctx;
  PoolingDescriptor pool;
  TensorDescriptor x;  // X and dX
  TensorDescriptor y;  // Y and dY
};

class DirectMaxPoolGradKernel final : public GradKernel {
 public:
  DirectMaxPoolGradKernel(const CudaContext& ctx, Window3d w, bool two_by_two)
      : ctx_(ctx), w_(w), two_by_two_(two_by_two) {}

  void run(const GradArgs& args) const override {
    if (!args.d_inputs[0]) return;
    if (two_by_two_) {
      launch_max_pool_2x2_grad(args.in(0), args.d_outputs[0], args.d_inputs[0], w_, ctx_.stream);
    } else {
      launch_max_pool_grad(args.in(0), args.d_outputs[0], args.d_inputs[0], w_, ctx_.stream);
    }
  }

 private:
  const CudaContext& ctx_;
  Window3d w_;
  bool two_by_two_;  // Note [2x2 pool gradient]
};

GradChoice plan_max_pool_grad(const GradRequest& r) {
  const CudaContext& ctx = cuda_context_of(r);
  const Shape& x = r.inputs[0].info.shape;
  const ConvGeometry onnx = make_conv_geometry(r.node, WindowOp::Pool, Shape(x.begin() + 2, x.end()),
                                               r.node.attr_ints("kernel_shape", {}));
  GradChoice choice;
  std::string why_not;
  if (numel(r.outputs[0].shape) == 0) {
    why_not = "empty output";
  } else if (!fits_int(x)) {
    why_not = "X " + shape_str(x) + " has more than 2^31-1 elements";
  } else if (const Window3d w = pool_window(onnx, x); onnx.rank() == 2 && max_pool_2x2_grad_fits(w)) {
    choice.algorithm = "2x2 gradient kernel (window argmax, one thread per window)";
    choice.rejected.push_back({"cudnnPoolingBackward", "slower on 2x2 stride-2 windows (Note [2x2 pool gradient])"});
    choice.kernel = std::make_unique<DirectMaxPoolGradKernel>(ctx, w, true);
    return choice;
  } else {
    auto kernel = std::make_unique<CudnnMaxPoolGradKernel>(ctx);
    why_not = set_cudnn_max_pool(onnx.expanded_to(std::max(kMinSpatialRank, onnx.rank())), x,
                                 CUDNN_POOLING_MAX_DETERMINISTIC, kernel->pool, kernel->x, kernel->y);
    if (why_not.empty()) {
      choice.algorithm = "cudnnPoolingBackward (max, deterministic)";
      choice.rejected.push_back({"direct gradient kernel", "cuDNN covers this window"});
      choice.kernel = std::move(kernel);
      return choice;
    }
  }
  choice.algorithm = "direct gradient kernel (window argmax gather)";
  choice.rejected.push_back({"cudnnPoolingBackward", why_not});
  choice.kernel = std::make_unique<DirectMaxPoolGradKernel>(ctx, pool_window(onnx, x), false);
  return choice;
}

GradChoice plan_avg_pool_grad(const GradRequest& r) {
  const CudaContext* c = &cuda_context_of(r);
  const Shape& x = r.inputs[0].info.shape;
  const ConvGeometry onnx = make_conv_geometry(r.node, WindowOp::Pool, Shape(x.begin() + 2, x.end()),
                                               r.node.attr_ints("kernel_shape", {}));
  const Window3d w = pool_window(onnx, x);
  const ConvGeometry g = onnx.expanded_to(3);
  const std::array<int64_t, 3> pad_end = {g.pads_end[0], g.pads_end[1], g.pads_end[2]};
  const bool include_pad = r.node.attr_int("count_include_pad", 0) != 0;
  return make_grad_choice("direct gradient kernel (window gather)", [=](const GradArgs& a) {
    if (!a.d_inputs[0]) return;
    launch_avg_pool_grad(a.d_outputs[0], a.d_inputs[0], w, pad_end.data(), include_pad, c->stream);
  });
}

}  // namespace

void register_cuda_pool_grad_kernels(KernelRegistry& r, const CudaContext&) {
  r.at("MaxPool").with_gradient(plan_max_pool_grad);
  r.at("AveragePool").with_gradient(plan_avg_pool_grad);
}

}  // namespace dnnx::cuda
