// MaxPool on CUDA, NCHW (NCDHW), float32, float16 or bfloat16 (either path), int8 or uint8 (the
// direct kernel: the quantized MaxPool between int8 layers); "MaxPool@NHWC" and
// "GlobalAveragePool@NHWC" (Note [channels last]) on cuDNN's NHWC descriptors. cudnnPoolingForward where cuDNN
// means what ONNX means:
// no dilations, the same pads at both ends, and cuDNN's (floor) output size equal to ONNX's
// (ceil_mode can differ). Otherwise the direct max-pool kernel (window_kernels.cu), which
// follows ONNX exactly, in either layout; the plan says which and why. 1-D pools run as 2-D with a unit height.
#include <algorithm>

#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/pool/max_pool_layout.h"
#include "backends/cuda/runtime/tensor_desc.h"
#include "ops/layout/channels_last.h"
#include "ops/conv/conv_geometry.h"

namespace dnnx::cuda {

namespace {

constexpr size_t kMinSpatialRank = 2;

bool is_8bit(DType dtype) { return dtype == DType::Int8 || dtype == DType::UInt8; }

const std::vector<DType> kFloatHalvesAnd8Bit = {DType::Float32, DType::Float16, DType::BFloat16, DType::Int8,
                                                DType::UInt8};

// One cudnnPoolingForward (max, or the channels-last global average); its descriptors are filled at
// plan time and never change after.
struct CudnnPoolKernel final : Kernel {
  explicit CudnnPoolKernel(const CudaContext& context) : ctx(context) {}

  void run(const KernelArgs& args) const override {
    const float one = 1.0f, zero = 0.0f;
    check(cudnnPoolingForward(ctx.cudnn, pool, &one, x, args.in(0), &zero, y, args.out(0)), "cudnnPoolingForward");
  }

  const CudaContext& ctx;
  PoolingDescriptor pool;
  TensorDescriptor x;
  TensorDescriptor y;
};

class DirectMaxPoolKernel final : public Kernel {
 public:
  // channels: 1, or C for a channels-last X (then w.planes is N)
  DirectMaxPoolKernel(const CudaContext& ctx, Window3d w, DType dtype, int64_t channels)
      : ctx_(ctx), w_(w), dtype_(dtype), channels_(channels) {}

  void run(const KernelArgs& args) const override {
    launch_max_pool(args.in<void>(0), args.out<void>(0), w_, dtype_, ctx_.stream, channels_);
  }

 private:
  const CudaContext& ctx_;
  Window3d w_;
  DType dtype_;  // float32, or a half type (compared in float)
  int64_t channels_;
};

KernelChoice plan_max_pool(const CudaContext& ctx, bool channels_last, const Node& node,
                           const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  // ONNX's dims; a channels-last X arrives as [N, H, W, C] (Note [channels last])
  const Shape x = channels_last ? to_channels_first(inputs[0].info.shape) : inputs[0].info.shape;
  const ConvGeometry onnx = make_conv_geometry(node, WindowOp::Pool, Shape(x.begin() + 2, x.end()),
                                               node.attr_ints("kernel_shape", {}));
  KernelChoice choice;
  std::string why_not;
  if (numel(outputs[0].shape) == 0) {
    why_not = "empty output";
  } else if (!fits_int(x)) {
    why_not = "X " + shape_str(x) + " has more than 2^31-1 elements";
  } else if (is_8bit(inputs[0].info.dtype)) {
    why_not = "8-bit X: cuDNN pools int8 only in its vectorized layouts";
  } else {
    auto kernel = std::make_unique<CudnnPoolKernel>(ctx);
    why_not = set_cudnn_max_pool(onnx.expanded_to(std::max(kMinSpatialRank, onnx.rank())), x, CUDNN_POOLING_MAX,
                                 kernel->pool, kernel->x, kernel->y, inputs[0].info.dtype, channels_last);
    if (why_not.empty()) {
      choice.algorithm = "cudnnPoolingForward (max)";
      choice.rejected.push_back({"direct kernel", "cuDNN covers this window"});
      choice.kernel = std::move(kernel);
      return choice;
    }
  }
  choice.algorithm = "direct kernel";
  choice.rejected.push_back({"cudnnPoolingForward", why_not});
  Window3d w = pool_window(onnx, x);  // planes N*C
  if (channels_last) w.planes = x[0];
  choice.kernel = std::make_unique<DirectMaxPoolKernel>(ctx, w, inputs[0].info.dtype, channels_last ? x[1] : 1);
  return choice;
}

// GlobalAveragePool@NHWC: X [N, H, W, C] -> Y [N, 1, 1, C] (the same bytes as ONNX's [N, C, 1, 1])
// as one cudnnPoolingForward averaging an H x W window.
KernelChoice plan_global_average_pool_nhwc(const CudaContext& ctx, const Node& node,
                                           const std::vector<ValueInfo>& inputs) {
  const Shape x = to_channels_first(inputs[0].info.shape);  // [N, C, H, W]
  if (!fits_int(x)) node_fail<UnsupportedModelError>(node, "X " + shape_str(x) + " has more than 2^31-1 elements");
  auto kernel = std::make_unique<CudnnPoolKernel>(ctx);
  const DType dtype = inputs[0].info.dtype;
  const int window[2] = {static_cast<int>(x[2]), static_cast<int>(x[3])}, pads[2] = {0, 0};
  check(cudnnSetPoolingNdDescriptor(kernel->pool, CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, CUDNN_NOT_PROPAGATE_NAN,
                                    2, window, pads, window),
        "cudnnSetPoolingNdDescriptor");
  set_tensor(kernel->x, x, dtype, true);
  set_tensor(kernel->y, {x[0], x[1], 1, 1}, dtype, true);
  KernelChoice choice;
  choice.algorithm = "cudnnPoolingForward (average over the whole window)";
  choice.kernel = std::move(kernel);
  return choice;
}

}  // namespace

std::string set_cudnn_max_pool(const ConvGeometry& g, const Shape& x, cudnnPoolingMode_t mode, PoolingDescriptor& pool,
                               TensorDescriptor& x_desc, TensorDescriptor& y_desc, DType dtype, bool channels_last) {
  for (size_t i = 0; i < g.rank(); ++i) {
    if (g.dilations[i] != 1) return "dilations " + shape_str(g.dilations) + " (cuDNN pooling has none)";
    if (g.pads_begin[i] != g.pads_end[i]) {
      return "pads " + shape_str(g.pads_begin) + " / " + shape_str(g.pads_end) + " differ (cuDNN pads symmetrically)";
    }
  }
  const std::vector<int> window = to_int(g.kernel), pads = to_int(g.pads_begin), strides = to_int(g.strides);
  const cudnnStatus_t status = cudnnSetPoolingNdDescriptor(pool, mode, CUDNN_NOT_PROPAGATE_NAN,
                                                           static_cast<int>(g.rank()), window.data(), pads.data(),
                                                           strides.data());
  if (status != CUDNN_STATUS_SUCCESS) return std::string("cudnnSetPoolingNdDescriptor: ") + status_name(status);
  Shape x_dims{x[0], x[1]}, y_dims{x[0], x[1]};
  for (size_t i = 0; i < g.rank(); ++i) {
    x_dims.push_back(g.input[i]);
    y_dims.push_back(g.output[i]);
  }
  set_tensor(x_desc, x_dims, dtype, channels_last);
  std::vector<int> cudnn_y(y_dims.size());
  check(cudnnGetPoolingNdForwardOutputDim(pool, x_desc, static_cast<int>(cudnn_y.size()), cudnn_y.data()),
        "cudnnGetPoolingNdForwardOutputDim");
  if (cudnn_y != to_int(y_dims)) {
    return "cuDNN's output " + shape_str(Shape(cudnn_y.begin(), cudnn_y.end())) + " differs from ONNX's " +
           shape_str(y_dims) + " (ceil_mode)";
  }
  set_tensor(y_desc, y_dims, dtype, channels_last);
  return "";
}

Window3d pool_window(const ConvGeometry& onnx, const Shape& x) {
  const ConvGeometry g = onnx.expanded_to(3);
  Window3d w;
  w.planes = x[0] * x[1];
  for (size_t i = 0; i < 3; ++i) {
    w.in[i] = g.input[i];
    w.out[i] = g.output[i];
    w.kernel[i] = g.kernel[i];
    w.stride[i] = g.strides[i];
    w.dilation[i] = g.dilations[i];
    w.pad_begin[i] = g.pads_begin[i];
  }
  return w;
}

std::string channels_last_max_pool_reason(const Node& node, const std::string& prefix) {
  std::string why = symmetric_pads_reason(node, prefix);
  if (!why.empty()) return why;
  if (node.attr_int(prefix + "ceil_mode", 0) != 0) return "ceil_mode";
  if (node.attr_int(prefix + "storage_order", 0) != 0) return "storage_order";
  for (int64_t d : node.attr_ints(prefix + "dilations", {})) {
    if (d != 1) return "dilations";
  }
  if (node.outputs.size() > 1 && !node.outputs[1].empty()) return "the Indices output";
  return "";
}

void register_cuda_pool_kernels(KernelRegistry& r, const CudaContext& ctx) {
  for (const bool channels_last : {false, true}) {
    r.add(channels_last ? std::string("MaxPool") + kChannelsLastSuffix : "MaxPool",
          [&ctx, channels_last](const Node& node, const std::vector<ValueInfo>& inputs,
                                const std::vector<TensorInfo>& outputs) {
            return plan_max_pool(ctx, channels_last, node, inputs, outputs);
          })
        .with_dtypes(channels_last ? kFloatAndHalves : kFloatHalvesAnd8Bit)
        .refusing(channels_last ? channels_last_check("MaxPool", [](const Node& node) {
          // the direct kernel takes any window; cuDNN's where it can (plan_max_pool)
          if (node.attr_int("storage_order", 0) != 0) return std::string("storage_order");
          return node.has_output(1) ? std::string("the Indices output") : std::string();
        }) : NodeCheck([](const Node& node) {
          return node.has_output(1) ? std::string("no CUDA kernel for MaxPool's Indices output") : std::string();
        }));
  }
  r.add(std::string("GlobalAveragePool") + kChannelsLastSuffix,
        [&ctx](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
          return plan_global_average_pool_nhwc(ctx, node, inputs);
        })
      .with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda
