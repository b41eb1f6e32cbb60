// Conv on cuDNN, NCHW (NCDHW) float32: cudnnConvolutionForward with the algorithm and math type
// that conv_algo.h picks (FMA at fp32, TF32 tensor ops allowed at tf32), then cudnnAddTensor for
// the bias. "Conv+Relu" (made by the fuse_conv_relu pass) is one
// cudnnConvolutionBiasActivationForward: bias and Relu in the conv's epilogue (a conv without B
// gets a zero bias). 1-D convs run as 2-D with a unit height (cuDNN wants at least two spatial
// dims). cuDNN pads symmetrically; where ONNX's pads differ between the two ends (explicit pads
// or SAME_* auto_pad), the excess is zero-filled by the pad kernel into the workspace first and
// cuDNN pads the common part.
#include <algorithm>
#include <cstdlib>

#include "backends/cuda/conv_algo.h"
#include "backends/cuda/cuda_kernels.h"
#include "backends/cuda/glue_kernels.h"
#include "backends/cuda/tensor_desc.h"
#include "ops/conv_geometry.h"

namespace dnnx::cuda {

namespace {

constexpr size_t kMinSpatialRank = 2;
constexpr size_t kWorkspaceAlignment = 256;

size_t align_up(size_t n) { return (n + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment; }

// The explicit padding of X for an asymmetric conv: X [N, C, in...] -> [N, C, padded...].
struct ExplicitPad {
  bool needed = false;
  int64_t planes = 0;                                  // N * C
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, begin[3] = {0, 0, 0};  // D, H, W (unit dims first)
  size_t bytes = 0;                                    // of the padded X, aligned
};

enum class Epilogue { None, BiasRelu };

class ConvKernel final : public Kernel {
 public:
  ConvKernel(const CudaContext& ctx, std::unique_ptr<ConvDescriptors> d, ConvAlgoChoice algo, ExplicitPad pad,
             bool has_bias, Epilogue epilogue, int64_t filters, size_t y_rank)
      : ctx_(ctx), d_(std::move(d)), algo_(algo.algo), algo_workspace_(algo.workspace_bytes), pad_(pad),
        has_bias_(has_bias), epilogue_(epilogue) {
    Shape b(y_rank, 1);  // [1, M, 1, 1(, 1)]
    b[1] = filters;
    set_tensor(bias_, b);
    if (epilogue_ == Epilogue::BiasRelu) {
      check(cudnnSetActivationDescriptor(relu_, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0),
            "cudnnSetActivationDescriptor");
      if (!has_bias_) {
        const size_t bytes = static_cast<size_t>(filters) * sizeof(float);
        zero_bias_ = device_alloc(bytes, "cudaMalloc (zero bias)");
        check(cudaMemsetAsync(zero_bias_.get(), 0, bytes, ctx_.stream), "cudaMemsetAsync");
      }
    }
  }

  // x [N, C, in...], w [M, C/group, k...], b [M] -> y [N, M, out...]. Workspace: the padded X
  // (when needed), then the algorithm's own.
  void run(const KernelArgs& args) const override {
    const float* x = args.in(0);
    auto* workspace = static_cast<uint8_t*>(args.workspace);
    if (pad_.needed) {
      auto* padded = reinterpret_cast<float*>(workspace);
      launch_pad(x, padded, pad_.planes, pad_.in, pad_.out, pad_.begin, ctx_.stream);
      x = padded;
      workspace += pad_.bytes;
    }
    const float one = 1.0f, zero = 0.0f;
    void* algo_workspace = algo_workspace_ ? workspace : nullptr;
    if (epilogue_ == Epilogue::BiasRelu) {
      // y = relu(conv(x) + 0 * z + b); z must be a valid tensor, and with alpha2 = 0 it is y.
      const void* bias = has_bias_ ? args.in(2) : zero_bias_.get();
      check(cudnnConvolutionBiasActivationForward(ctx_.cudnn, &one, d_->x, x, d_->w, args.in(1), d_->conv, algo_,
                                                  algo_workspace, algo_workspace_, &zero, d_->y, args.out(0), bias_,
                                                  bias, relu_, d_->y, args.out(0)),
            "cudnnConvolutionBiasActivationForward");
      return;
    }
    check(cudnnConvolutionForward(ctx_.cudnn, &one, d_->x, x, d_->w, args.in(1), d_->conv, algo_, algo_workspace,
                                  algo_workspace_, &zero, d_->y, args.out(0)),
          "cudnnConvolutionForward");
    if (has_bias_) check(cudnnAddTensor(ctx_.cudnn, &one, bias_, args.in(2), &one, d_->y, args.out(0)), "cudnnAddTensor");
  }

 private:
  const CudaContext& ctx_;
  std::unique_ptr<ConvDescriptors> d_;
  cudnnConvolutionFwdAlgo_t algo_;
  size_t algo_workspace_;
  ExplicitPad pad_;
  bool has_bias_;
  Epilogue epilogue_;
  TensorDescriptor bias_;      // [1, M, 1, 1(, 1)]
  ActivationDescriptor relu_;  // BiasRelu only
  DeviceMemory zero_bias_;     // BiasRelu without B: M zeros
};

// Does nothing: an output with no elements.
class EmptyKernel final : public Kernel {
 public:
  void run(const KernelArgs&) const override {}
};

// Splits ONNX's pads into cuDNN's symmetric part and the excess the pad kernel fills.
ExplicitPad plan_padding(const ConvGeometry& g, int64_t planes, std::vector<int>& symmetric) {
  ExplicitPad pad;
  pad.planes = planes;
  const size_t offset = 3 - g.rank();  // unit dims first in the pad kernel's 3-D view
  for (size_t i = 0; i < g.rank(); ++i) {
    const int64_t b = g.pads_begin[i], e = g.pads_end[i];
    symmetric.push_back(static_cast<int>(std::min(b, e)));
    pad.in[offset + i] = g.input[i];
    pad.begin[offset + i] = std::max<int64_t>(0, b - e);
    pad.out[offset + i] = g.input[i] + std::abs(b - e);
    pad.needed = pad.needed || b != e;
  }
  if (pad.needed) pad.bytes = align_up(static_cast<size_t>(planes * pad.out[0] * pad.out[1] * pad.out[2]) * sizeof(float));
  return pad;
}

KernelChoice plan_conv(const CudaContext& ctx, Epilogue epilogue, const Node& node,
                       const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  const Shape& xs = inputs[0].info.shape;
  const Shape& ws = inputs[1].info.shape;
  KernelChoice choice;
  if (numel(outputs[0].shape) == 0) {
    choice.algorithm = "none (empty output)";
    choice.kernel = std::make_unique<EmptyKernel>();
    return choice;
  }
  if (!fits_int(xs) || !fits_int(outputs[0].shape)) {
    node_fail<UnsupportedModelError>(node, "X " + shape_str(xs) + " or Y " + shape_str(outputs[0].shape) +
                                               " has more than 2^31-1 elements (cuDNN's legacy API limit)");
  }
  const ConvGeometry onnx = make_conv_geometry(node, WindowOp::Conv, Shape(xs.begin() + 2, xs.end()),
                                               Shape(ws.begin() + 2, ws.end()));
  const ConvGeometry g = onnx.expanded_to(std::max(kMinSpatialRank, onnx.rank()));
  std::vector<int> pads;
  const ExplicitPad pad = plan_padding(g, xs[0] * xs[1], pads);

  auto d = std::make_unique<ConvDescriptors>();
  Shape x_dims{xs[0], xs[1]}, w_dims{ws[0], ws[1]}, y_dims{xs[0], ws[0]};
  for (size_t i = 0; i < g.rank(); ++i) {
    x_dims.push_back(pad.needed ? pad.out[3 - g.rank() + i] : g.input[i]);
    w_dims.push_back(g.kernel[i]);
    y_dims.push_back(g.output[i]);
  }
  set_tensor(d->x, x_dims);
  set_filter(d->w, w_dims);
  set_tensor(d->y, y_dims);
  const std::vector<int> strides = to_int(g.strides), dilations = to_int(g.dilations);
  check(cudnnSetConvolutionNdDescriptor(d->conv, static_cast<int>(g.rank()), pads.data(), strides.data(),
                                        dilations.data(), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
        "cudnnSetConvolutionNdDescriptor");
  check(cudnnSetConvolutionGroupCount(d->conv, static_cast<int>(g.group)), "cudnnSetConvolutionGroupCount");
  check(cudnnSetConvolutionMathType(d->conv, conv_math_type(ctx.options.precision)), "cudnnSetConvolutionMathType");

  std::vector<int> cudnn_y(y_dims.size());
  check(cudnnGetConvolutionNdForwardOutputDim(d->conv, d->x, d->w, static_cast<int>(cudnn_y.size()), cudnn_y.data()),
        "cudnnGetConvolutionNdForwardOutputDim");
  if (cudnn_y != to_int(y_dims)) {
    throw DeviceError("cuDNN's output dims differ from ONNX's " + shape_str(y_dims));
  }

  const size_t limit = ctx.options.workspace_limit;
  if (pad.bytes > limit) {
    throw DeviceError("asymmetric padding needs " + std::to_string(pad.bytes) + " bytes of workspace for the padded X, "
                      "over the workspace limit of " + std::to_string(limit));
  }
  ConvAlgoChoice algo = choose_conv_algorithm(ctx, *d, limit - pad.bytes, node.where());
  choice.algorithm = (pad.needed ? "pad kernel + " : "") + conv_algo_name(algo.algo) +
                     (epilogue == Epilogue::BiasRelu ? " (bias+relu fused)" : "") +
                     (algo.from_cache ? " (plan cache)" : "");
  choice.math = conv_math_name(algo.math_type);
  choice.workspace_bytes = pad.bytes + algo.workspace_bytes;
  choice.time_ms = algo.time_ms;
  choice.rejected = algo.rejected;
  const bool has_bias = inputs.size() > 2 && inputs[2].present;
  choice.kernel = std::make_unique<ConvKernel>(ctx, std::move(d), std::move(algo), pad, has_bias, epilogue, ws[0],
                                               y_dims.size());
  return choice;
}

}  // namespace

KernelFactory conv_factory(const CudaContext& ctx, Epilogue epilogue) {
  return [&ctx, epilogue](const Node& node, const std::vector<ValueInfo>& inputs,
                          const std::vector<TensorInfo>& outputs) {
    return plan_conv(ctx, epilogue, node, inputs, outputs);
  };
}

void register_cuda_conv_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Conv", conv_factory(ctx, Epilogue::None));
  r.add("Conv+Relu", conv_factory(ctx, Epilogue::BiasRelu));
}

}  // namespace dnnx::cuda
