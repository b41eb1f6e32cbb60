// Conv on cuDNN, NCHW (NCDHW) float32: the algorithm and math type that conv_algo.h picks (FMA at
// fp32, TF32 tensor ops allowed at tf32). The bias: with IMPLICIT_PRECOMP_GEMM (the one algorithm
// cuDNN allows CUDNN_ACTIVATION_IDENTITY with) one cudnnConvolutionBiasActivationForward adds it
// in the conv's epilogue; with any other algorithm cudnnConvolutionForward, then cudnnAddTensor.
// "Conv+Relu" (made by the fuse_conv_relu pass) is one cudnnConvolutionBiasActivationForward:
// bias and Relu in the conv's epilogue (a conv without B gets a zero bias); so is "Conv+Add+Relu"
// (fuse_conv_add_relu: a residual join), with the residual as cuDNN's z input (alpha2 = 1). 1-D convs run as 2-D
// with a unit height (cuDNN wants at least two spatial dims). cuDNN pads symmetrically; where
// ONNX's pads differ between the two ends (explicit pads or SAME_* auto_pad), the excess is
// zero-filled by the pad kernel into the workspace first and cuDNN pads the common part.
// A 2-D conv of one input channel (3x3 or 5x5) may instead run as the direct kernel
// (direct_conv.h, bias and Relu included, any pads): taken by the heuristic planner, and by the
// exhaustive one when its measured time beats cuDNN's best.
// "<op>@NHWC" (the channels_last pass, Note [channels last]): the same three ops on NHWC data and
// KRSC filters (cuDNN's NHWC descriptors, where its tensor-core kernels need no layout
// conversion); a 1x1 one with stride 1 and no pads is instead one cuBLASLt GEMM with bias, Relu
// and residual in the epilogue (conv_gemm.h), taken the way the direct kernel is (below).
// Float16 (precision="fp16", Note [half storage]): X, W, B and Y are CUDNN_DATA_HALF, the
// convolution's compute type stays CUDNN_DATA_FLOAT (fp32 accumulation, cuDNN's
// PSEUDO_HALF_CONFIG) with CUDNN_TENSOR_OP_MATH; cudnnConvolutionBiasActivationForward takes the
// bias in the output's type for this configuration (only its INT8 configurations want a float
// bias), so B is half too. BFloat16 (precision="bf16") the same way with CUDNN_DATA_BFLOAT16:
// cuDNN's PSEUDO_BFLOAT16_CONFIG (bfloat16 X, W, Y, float compute type, sm_80 and later; there
// is no true-bfloat16 configuration), B bfloat16 like Y. Should cuDNN refuse the fused call for
// a configuration (CUDNN_STATUS_NOT_SUPPORTED), the conv, cudnnAddTensor and the Relu run one by
// one from then on. The direct kernel is float32 only, so it is no candidate in half, and
// asymmetric padding uses the element-size pad kernel (launch_pad_nd).
#include <algorithm>
#include <atomic>
#include <climits>
#include <optional>

#include "backends/cuda/search/conv_algo.h"
#include "backends/cuda/search/conv_cache_key.h"
#include "backends/cuda/dense/blas.h"
#include "backends/cuda/search/pick.h"
#include "backends/cuda/search/reasons.h"
#include "backends/cuda/search/search.h"
#include "backends/cuda/conv/window_2d.h"
#include "backends/cuda/conv/conv_activation.h"
#include "backends/cuda/conv/conv_gemm.h"
#include "backends/cuda/conv/conv_layout.h"
#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/conv/depthwise_conv.h"
#include "backends/cuda/conv/direct_conv.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/runtime/tensor_desc.h"
#include "ops/layout/channels_last.h"
#include "ops/conv/conv_geometry.h"

namespace dnnx::cuda {

namespace {

// X [planes, D, H, W] -> the padded X, zeros around: float32 by launch_pad, a half type by the
// element-size pad kernel (zero bits are +0 in float16 and bfloat16 alike).
void run_explicit_pad(const ExplicitPad& pad, const void* x, void* padded, cudaStream_t stream) {
  if (!is_half(pad.dtype)) {
    launch_pad(static_cast<const float*>(x), static_cast<float*>(padded), pad.planes, pad.in, pad.out, pad.begin,
               stream);
    return;
  }
  PadDims dims;
  dims.rank = 4;
  dims.in[0] = dims.out[0] = pad.planes;
  for (int d = 0; d < 3; ++d) {
    dims.in[d + 1] = pad.in[d];
    dims.out[d + 1] = pad.out[d];
    dims.begin[d + 1] = pad.begin[d];
  }
  const int64_t n = pad.planes * pad.out[0] * pad.out[1] * pad.out[2];
  launch_pad_nd(x, padded, dtype_size(pad.dtype), n, dims, nullptr, 0, stream);
}

// None: y = conv(x) + b. BiasRelu (Conv+Relu): relu(conv(x) + b). BiasAddRelu (Conv+Add+Relu, a
// residual join): relu(conv(x) + z + b), z the node's input 3.
enum class Epilogue { None, BiasRelu, BiasAddRelu };
constexpr size_t kResidualInput = 3;

// The direct kernel's arithmetic at every precision: fp32 FMAs.
constexpr const char* kDirectMath = "fp32 (FMA, direct kernel)";
constexpr const char* kDirectName = "direct (1 input channel)";
constexpr const char* kGemmName = "cublasLtMatmul (1x1 conv as a GEMM)";
constexpr const char* kDepthwiseName = "direct depthwise";

// cuDNN runs cudnnConvolutionBiasActivationForward with CUDNN_ACTIVATION_IDENTITY only with this
// algorithm.
bool bias_fusable(cudnnConvolutionFwdAlgo_t algo) { return algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM; }

// x [N, 1, H, W] -> y [N, M, OH, OW] by the direct kernel (direct_conv.h), bias and Relu included.
class DirectConvKernel final : public Kernel {
 public:
  DirectConvKernel(const CudaContext& ctx, DirectConv2d shape, bool has_bias, bool relu)
      : ctx_(ctx), shape_(shape), has_bias_(has_bias), relu_(relu) {}

  void run(const KernelArgs& args) const override {
    launch_direct_conv(args.in(0), args.in(1), has_bias_ ? args.in(2) : nullptr, args.out(0), shape_, relu_,
                       ctx_.stream);
  }

 private:
  const CudaContext& ctx_;
  DirectConv2d shape_;
  bool has_bias_, relu_;
};

// The direct kernel's shape for this conv, when it takes it (n == 0 when not).
DirectConv2d direct_shape(const ConvGeometry& g, const Shape& xs, const Shape& ws) {
  DirectConv2d c;
  if (g.rank() != 2 || g.group != 1 || xs[1] != 1 || ws[1] != 1) return c;
  const int64_t dims[] = {g.input[0], g.input[1], g.output[0], g.output[1], ws[0], g.kernel[0], g.kernel[1],
                          g.strides[0], g.strides[1], g.dilations[0], g.dilations[1], g.pads_begin[0],
                          g.pads_begin[1]};
  for (int64_t v : dims) {
    if (v < 0 || v > INT_MAX / 64) return c;
  }
  c.h = static_cast<int>(g.input[0]);
  c.w = static_cast<int>(g.input[1]);
  c.oh = static_cast<int>(g.output[0]);
  c.ow = static_cast<int>(g.output[1]);
  c.m = static_cast<int>(ws[0]);
  set_window_2d(c, g);
  c.n = xs[0];
  if (!direct_conv_supported(c)) c.n = 0;
  return c;
}

// x -> y by the direct depthwise kernel (depthwise_conv.h): bias, residual z, and Relu or a fused
// conv activation (Note [depthwise activations]) included.
class DepthwiseConvKernel final : public Kernel {
 public:
  DepthwiseConvKernel(const CudaContext& ctx, DepthwiseConv2d shape, bool has_bias, Epilogue epilogue,
                      ConvActivation act)
      : ctx_(ctx), shape_(shape), has_bias_(has_bias), residual_(epilogue == Epilogue::BiasAddRelu),
        finish_{epilogue != Epilogue::None, act} {}

  void run(const KernelArgs& args) const override {
    const void* z = residual_ ? args.in<void>(kResidualInput) : nullptr;
    launch_depthwise_conv(args.in<void>(0), args.in<void>(1), has_bias_ ? args.in<void>(2) : nullptr, z,
                          args.out<void>(0), shape_, finish_, ctx_.stream);
  }

 private:
  const CudaContext& ctx_;
  DepthwiseConv2d shape_;
  bool has_bias_, residual_;
  DepthwiseEpilogue finish_;  // Relu (Conv+Relu, Conv+Add+Relu) or the node's activation
};

// The direct depthwise kernel's shape for this conv (ONNX's dims xs, ws), when it takes it (n == 0
// when not): one filter per channel and group, 1-D or 2-D.
DepthwiseConv2d depthwise_shape(const ConvGeometry& onnx, const Shape& xs, const Shape& ws, DType dtype,
                                bool channels_last) {
  DepthwiseConv2d c;
  if (onnx.rank() < 1 || onnx.rank() > 2 || onnx.group != xs[1] || ws[0] != xs[1] || ws[1] != 1) return c;
  const ConvGeometry g = onnx.expanded_to(2);
  const int64_t dims[] = {xs[1],         g.input[0],    g.input[1],    g.output[0],     g.output[1],
                          g.kernel[0],   g.kernel[1],   g.strides[0],  g.strides[1],    g.dilations[0],
                          g.dilations[1], g.pads_begin[0], g.pads_begin[1]};
  for (int64_t v : dims) {
    if (v < 0 || v > INT_MAX) return c;
  }
  c.c = static_cast<int>(xs[1]);
  c.h = static_cast<int>(g.input[0]);
  c.w = static_cast<int>(g.input[1]);
  c.oh = static_cast<int>(g.output[0]);
  c.ow = static_cast<int>(g.output[1]);
  set_window_2d(c, g);
  c.channels_last = channels_last;
  c.dtype = dtype;
  c.n = xs[0];
  if (!depthwise_conv_supported(c)) c.n = 0;
  return c;
}

class ConvKernel final : public Kernel {
 public:
  ConvKernel(const CudaContext& ctx, std::unique_ptr<ConvDescriptors> d, ConvAlgoChoice algo, ExplicitPad pad,
             bool has_bias, Epilogue epilogue, int64_t filters, size_t y_rank, DType dtype, bool channels_last)
      : ctx_(ctx), d_(std::move(d)), algo_(algo.algo), algo_workspace_(algo.workspace_bytes), pad_(pad),
        has_bias_(has_bias), epilogue_(epilogue) {
    Shape b(y_rank, 1);  // [1, M, 1, 1(, 1)]
    b[1] = filters;
    set_tensor(bias_, b, dtype, channels_last);
    if (epilogue_ == Epilogue::None && has_bias_ && bias_fusable(algo_)) {
      check(cudnnSetActivationDescriptor(relu_, CUDNN_ACTIVATION_IDENTITY, CUDNN_NOT_PROPAGATE_NAN, 0.0),
            "cudnnSetActivationDescriptor");
    }
    if (epilogue_ != Epilogue::None) {
      check(cudnnSetActivationDescriptor(relu_, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0),
            "cudnnSetActivationDescriptor");
      if (!has_bias_) {
        const size_t bytes = static_cast<size_t>(filters) * dtype_size(dtype);
        zero_bias_ = device_alloc(ctx_, bytes, "cudaMalloc (zero bias)");
        check(cudaMemsetAsync(zero_bias_.get(), 0, bytes, ctx_.stream), "cudaMemsetAsync");
      }
    }
  }

  // x [N, C, in...], w [M, C/group, k...], b [M] -> y [N, M, out...]. Workspace: the padded X
  // (when needed), then the algorithm's own.
  void run(const KernelArgs& args) const override {
    const void* x = args.in<void>(0);
    auto* workspace = static_cast<uint8_t*>(args.workspace);
    if (pad_.needed) {
      run_explicit_pad(pad_, x, workspace, ctx_.stream);
      x = workspace;
      workspace += pad_.bytes;
    }
    const float one = 1.0f, zero = 0.0f;
    void* algo_workspace = algo_workspace_ ? workspace : nullptr;
    if (epilogue_ != Epilogue::None) {
      // y = relu(conv(x) + alpha2 * z + b): Conv+Relu passes y as z with alpha2 = 0 (z must be a
      // valid tensor), Conv+Add+Relu the residual with alpha2 = 1 (z never shares y's memory:
      // both are live at this layer).
      const bool residual = epilogue_ == Epilogue::BiasAddRelu;
      const void* z = residual ? args.in<void>(kResidualInput) : args.out<void>(0);
      const float alpha2 = residual ? 1.0f : 0.0f;
      const void* bias = has_bias_ ? args.in<void>(2) : zero_bias_.get();
      if (fused_bias_ok_.load(std::memory_order_relaxed)) {
        const cudnnStatus_t status = cudnnConvolutionBiasActivationForward(
            ctx_.cudnn, &one, d_->x, x, d_->w, args.in(1), d_->conv, algo_, algo_workspace, algo_workspace_, &alpha2,
            d_->y, z, bias_, bias, relu_, d_->y, args.out(0));
        if (status == CUDNN_STATUS_SUCCESS) return;
        if (status != CUDNN_STATUS_NOT_SUPPORTED) check(status, "cudnnConvolutionBiasActivationForward");
        fused_bias_ok_.store(false, std::memory_order_relaxed);  // the same three steps, one by one
      }
      check(cudnnConvolutionForward(ctx_.cudnn, &one, d_->x, x, d_->w, args.in(1), d_->conv, algo_, algo_workspace,
                                    algo_workspace_, &zero, d_->y, args.out(0)),
            "cudnnConvolutionForward");
      check(cudnnAddTensor(ctx_.cudnn, &one, bias_, bias, &one, d_->y, args.out(0)), "cudnnAddTensor");
      if (residual) check(cudnnAddTensor(ctx_.cudnn, &one, d_->y, z, &one, d_->y, args.out(0)), "cudnnAddTensor (z)");
      check(cudnnActivationForward(ctx_.cudnn, relu_, &one, d_->y, args.out(0), &zero, d_->y, args.out(0)),
            "cudnnActivationForward (relu)");
      return;
    }
    if (has_bias_ && bias_fusable(algo_) && fused_bias_ok_.load(std::memory_order_relaxed)) {
      // y = identity(conv(x) + 0 * z + b) in one call; should cuDNN refuse the shapes, the
      // separate add below takes over from then on.
      const cudnnStatus_t status = cudnnConvolutionBiasActivationForward(
          ctx_.cudnn, &one, d_->x, x, d_->w, args.in(1), d_->conv, algo_, algo_workspace, algo_workspace_, &zero,
          d_->y, args.out(0), bias_, args.in(2), relu_, d_->y, args.out(0));
      if (status == CUDNN_STATUS_SUCCESS) return;
      if (status != CUDNN_STATUS_NOT_SUPPORTED) check(status, "cudnnConvolutionBiasActivationForward (identity)");
      fused_bias_ok_.store(false, std::memory_order_relaxed);
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
  ActivationDescriptor relu_;  // BiasRelu: Relu; None with a fusable bias: identity
  mutable std::atomic<bool> fused_bias_ok_{true};  // false once cuDNN refused the fused call
  DeviceMemory zero_bias_;     // BiasRelu without B: M zeros
};

// Does nothing: an output with no elements.
class EmptyKernel final : public Kernel {
 public:
  void run(const KernelArgs&) const override {}
};

// A kernel of the planner's own beside cuDNN's algorithms: the direct one-channel kernel, or the
// channels-last 1x1 conv as a GEMM. The heuristic planner takes it; the exhaustive one times it
// against cuDNN's best and takes the faster (kStrictlyFaster, Note [the pick] in pick.h), the
// time kept in the plan-cache entry of cuDNN's choice (so that a second process times nothing).
struct OwnCandidate {
  std::string name;       // e.g. kDirectName
  std::string algorithm;  // as the plan shows it when taken
  std::string math;
  std::unique_ptr<Kernel> kernel;
  ScratchCandidate scratch;  // how a search times it (scratch.kernel is `kernel`)
  const char* what = "";     // what the timing is, in a device error
};

OwnCandidate direct_candidate(const CudaContext& ctx, const DirectConv2d& direct, bool has_bias, bool relu,
                              std::unique_ptr<Kernel>& timing_kernel) {
  OwnCandidate own;
  own.name = kDirectName;
  own.algorithm = std::string(kDirectName) + (relu ? " (bias+relu fused)" : has_bias ? " (bias fused)" : "");
  own.math = kDirectMath;
  own.kernel = std::make_unique<DirectConvKernel>(ctx, direct, has_bias, relu);
  // The timed kernel reads a bias (scratch input 2) whether or not the layer has one: one add per
  // output, the same for every layer of the shape.
  timing_kernel = std::make_unique<DirectConvKernel>(ctx, direct, true, relu);
  const size_t f = sizeof(float);
  own.scratch.kernel = timing_kernel.get();
  own.scratch.input_bytes = {static_cast<size_t>(direct.n) * direct.h * direct.w * f,
                             size_t{1} * direct.m * direct.kh * direct.kw * f, size_t{1} * direct.m * f};
  own.scratch.output_bytes = {static_cast<size_t>(direct.n) * direct.m * direct.oh * direct.ow * f};
  own.what = "timing the direct convolution";
  return own;
}

OwnCandidate depthwise_candidate(const CudaContext& ctx, const DepthwiseConv2d& dw, bool has_bias, Epilogue epilogue,
                                 ConvActivation act, std::unique_ptr<Kernel>& timing_kernel) {
  OwnCandidate own;
  own.name = kDepthwiseName;
  std::string fused = epilogue == Epilogue::BiasAddRelu ? "bias+residual+relu"
                      : epilogue == Epilogue::BiasRelu  ? "bias+relu"
                      : has_bias                         ? "bias"
                                                         : "";
  if (act.kind != ConvActivationKind::None) {
    fused += (fused.empty() ? "" : "+") + std::string(conv_activation_name(act.kind));
  }
  own.algorithm = std::string(kDepthwiseName) + (fused.empty() ? "" : " (" + fused + " fused)");
  own.math = is_half(dw.dtype) ? std::string(half_storage_name(dw.dtype)) + " storage, fp32 FMA (direct depthwise kernel)"
                               : "fp32 (FMA, direct depthwise kernel)";
  own.kernel = std::make_unique<DepthwiseConvKernel>(ctx, dw, has_bias, epilogue, act);
  timing_kernel = std::make_unique<DepthwiseConvKernel>(ctx, dw, true, epilogue, act);
  const size_t e = dtype_size(dw.dtype);
  const size_t y = static_cast<size_t>(dw.n) * dw.c * dw.oh * dw.ow * e;
  own.scratch.kernel = timing_kernel.get();
  own.scratch.input_bytes = {static_cast<size_t>(dw.n) * dw.c * dw.h * dw.w * e,
                             size_t{1} * dw.c * dw.kh * dw.kw * e, size_t{1} * dw.c * e};
  if (epilogue == Epilogue::BiasAddRelu) own.scratch.input_bytes.push_back(y);
  own.scratch.output_bytes = {y};
  own.what = "timing the direct depthwise convolution";
  return own;
}

OwnCandidate gemm_candidate(const CudaContext& ctx, const ConvGemm& shape, size_t limit, size_t& workspace) {
  OwnCandidate own;
  own.kernel = plan_conv_gemm(ctx, shape, limit, workspace);
  if (!own.kernel) return own;
  own.name = kGemmName;
  own.algorithm = std::string(kGemmName) + (shape.residual ? " (bias+residual+relu epilogue)"
                                            : shape.relu   ? " (bias+relu epilogue)"
                                            : shape.has_bias ? " (bias epilogue)"
                                                             : "");
  own.math = blas_math_name(ctx, shape.dtype);
  const size_t e = dtype_size(shape.dtype);
  const size_t x = shape.rows * shape.channels * e, y = shape.rows * shape.filters * e;
  own.scratch.kernel = own.kernel.get();
  own.scratch.input_bytes = {x, size_t(shape.filters * shape.channels) * e, size_t(shape.filters) * e};
  if (shape.residual) own.scratch.input_bytes.push_back(y);
  own.scratch.output_bytes = {y};
  own.scratch.workspace_bytes = workspace;
  own.what = "timing the 1x1 conv as a GEMM";
  return own;
}

KernelChoice plan_conv(const CudaContext& ctx, Epilogue epilogue, bool channels_last, const Node& node,
                       const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  // ONNX's dims; channels-last inputs arrive as [N, H, W, C] and [K, R, S, C] (Note [channels last])
  const Shape xs = channels_last ? to_channels_first(inputs[0].info.shape) : inputs[0].info.shape;
  const Shape ws = channels_last ? to_channels_first(inputs[1].info.shape) : inputs[1].info.shape;
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
  const ConvLayout layout = plan_conv_layout(node, xs, ws, inputs[0].info.dtype, channels_last);
  const ConvGeometry& onnx = layout.onnx;
  const ExplicitPad& pad = layout.pad;
  auto d = std::make_unique<ConvDescriptors>();
  set_conv_descriptors(ctx, layout, *d);
  const Shape& y_dims = layout.y_dims;
  const DType dtype = layout.dtype;  // float32, or a half type (then W and B too)

  const size_t limit = ctx.options.workspace_limit;
  if (pad.bytes > limit) {
    throw DeviceError("asymmetric padding needs " + std::to_string(pad.bytes) + " bytes of workspace for the padded X, "
                      "over the workspace limit of " + std::to_string(limit));
  }
  const bool has_bias = inputs.size() > 2 && inputs[2].present;  // Conv+Add+Relu: "" when the Conv had none
  // The planner's own candidate, and the plan-cache key its measured time is kept under (taken
  // before cuDNN's choice sets its math type on the descriptor).
  const DirectConv2d direct =
      dtype == DType::Float32 && epilogue != Epilogue::BiasAddRelu && !channels_last  // no residual, NCHW
          ? direct_shape(onnx.rank() == 2 ? onnx : ConvGeometry{}, xs, ws)
          : DirectConv2d{};
  OwnCandidate own;
  std::unique_ptr<Kernel> timing_kernel;  // the direct kernel as the search times it
  size_t own_workspace = 0;
  const DepthwiseConv2d depthwise =
      direct.n == 0 ? depthwise_shape(onnx, xs, ws, dtype, channels_last) : DepthwiseConv2d{};
  if (direct.n > 0 && !ctx.avoided(kDirectName)) {
    own = direct_candidate(ctx, direct, has_bias, epilogue == Epilogue::BiasRelu, timing_kernel);
  } else if (depthwise.n > 0) {
    if (!ctx.avoided(kDepthwiseName)) {
      own = depthwise_candidate(ctx, depthwise, has_bias, epilogue, conv_activation_of(node), timing_kernel);
    }
  } else if (direct.n == 0 && !ctx.avoided(kGemmName) && conv_gemm_unsupported(onnx, xs, channels_last).empty()) {
    ConvGemm shape;
    shape.rows = xs[0] * xs[2] * xs[3];
    shape.channels = xs[1];
    shape.filters = ws[0];
    shape.dtype = dtype;
    shape.has_bias = has_bias;
    shape.relu = epilogue != Epilogue::None;
    shape.residual = epilogue == Epilogue::BiasAddRelu;
    own = gemm_candidate(ctx, shape, limit, own_workspace);
  }
  const Search search(ctx, conv_search_timed(ctx, *d));  // the one choose_conv_algorithm makes
  const std::string cache_key = own.kernel && search.caching() ? conv_cache_key(ctx, *d, limit - pad.bytes) : "";
  ConvAlgoChoice algo = choose_conv_algorithm(ctx, *d, limit - pad.bytes, node.where());
  choice.algorithm = (pad.needed ? "pad kernel + " : "") + conv_algo_name(algo.algo) +
                     (epilogue == Epilogue::BiasRelu ? " (bias+relu fused)" : "") +
                     (epilogue == Epilogue::BiasAddRelu ? " (bias+residual+relu fused)" : "") +
                     (algo.from_cache ? " (plan cache)" : "");
  choice.math = conv_math_name(algo.math_type, conv_precision(ctx.options.precision, dtype));
  choice.workspace_bytes = pad.bytes + algo.workspace_bytes;
  choice.time_ms = algo.time_ms;
  choice.rejected = plain(algo.rejected);
  choice.candidate = conv_algo_name(algo.algo);

  if (own.kernel) {
    const std::string cudnn_name = conv_algo_name(algo.algo);
    bool take = true;
    double own_ms = -1;
    // The candidate's time: from the plan-cache entry of cuDNN's choice where the process that
    // searched recorded it there, else measured now (and recorded in that entry); "background"
    // measures nothing and, without a recorded time, takes the heuristic rule (the own kernel).
    bool cached = false;
    if (algo.from_cache) {
      for (auto it = algo.rejected.begin(); it != algo.rejected.end(); ++it) {
        if (it->algorithm != own.name) continue;
        own_ms = it->time_ms;
        cached = own_ms >= 0;
        algo.rejected.erase(it);
        break;
      }
    }
    if (search.timed() || cached) {
      if (!cached) own_ms = search.time_on_scratch({own.scratch}, own.what)[0];
      if (own_ms < 0) {
        take = false;
        algo.rejected.emplace_back(own.name, "its scratch buffers could not be allocated at plan time (out of memory)");
      } else {
        take = pick_fastest({algo.time_ms, own_ms}, kStrictlyFaster) == 1;  // cuDNN's choice ranks first
        const TimedRejected note(own.name, format_ms(own_ms) + (take ? ", faster than " : ", slower than ") + cudnn_name,
                                 own_ms);
        if (!cached && !cache_key.empty() && !algo.from_cache) search.annotate(cache_key, note);
        if (!take) algo.rejected.push_back(note);
      }
      choice.rejected = plain(algo.rejected);
    }
    if (take) {
      KernelChoice own_choice;
      own_choice.algorithm = own.algorithm + (algo.from_cache ? " (plan cache)" : "");
      own_choice.math = own.math;
      own_choice.time_ms = own_ms;
      own_choice.workspace_bytes = own_workspace;
      own_choice.rejected = std::move(choice.rejected);
      own_choice.rejected.push_back(
          {cudnn_name, algo.time_ms >= 0 && own_ms >= 0 ? slower_than(algo.time_ms, own.name)
                       : direct.n > 0    ? "cuDNN's pick, ranked below the direct kernel for one input channel"
                       : depthwise.n > 0 ? "cuDNN's pick, ranked below the direct kernel for a depthwise conv "
                                           "(Note [direct depthwise conv])"
                                         : "cuDNN's pick, ranked below the GEMM for a channels-last 1x1 conv"});
      own_choice.candidate = own.name;
      own_choice.kernel = std::move(own.kernel);
      return own_choice;
    }
  }
  choice.kernel = std::make_unique<ConvKernel>(ctx, std::move(d), std::move(algo), pad, has_bias, epilogue, ws[0],
                                               y_dims.size(), dtype, channels_last);
  return choice;
}

}  // namespace

KernelFactory conv_factory(const CudaContext& ctx, Epilogue epilogue, bool channels_last) {
  return [&ctx, epilogue, channels_last](const Node& node, const std::vector<ValueInfo>& inputs,
                                         const std::vector<TensorInfo>& outputs) {
    return plan_conv(ctx, epilogue, channels_last, node, inputs, outputs);
  };
}

void register_cuda_conv_kernels(KernelRegistry& r, const CudaContext& ctx) {
  const std::pair<const char*, Epilogue> ops[] = {
      {"Conv", Epilogue::None}, {"Conv+Relu", Epilogue::BiasRelu}, {"Conv+Add+Relu", Epilogue::BiasAddRelu}};
  for (const auto& [op, epilogue] : ops) {
    r.add(op, conv_factory(ctx, epilogue, false)).with_dtypes(kFloatAndHalves);
    r.add(std::string(op) + kChannelsLastSuffix, conv_factory(ctx, epilogue, true))
        .with_dtypes(kFloatAndHalves)
        .refusing(channels_last_check(op, [](const Node& node) { return symmetric_pads_reason(node, ""); }));
  }
  // Note [conv activations on cuda]: the plain conv, then the activation in place, but where the
  // direct depthwise kernel applies it (Note [depthwise activations]);
  // DNNX_PROBE_CUDA_CONV_ACTIVATION=0 keeps the conv and its activation apart (the measurement's
  // "before")
  if (!ctx.hooks.conv_activation) return;
  for (const char* op : {"Conv+Swish", "Conv+HardSwish", "Conv+Clip"}) {
    r.add(op, conv_activation_factory(ctx, conv_factory(ctx, Epilogue::None, false), kDepthwiseName))
        .with_dtypes(kFloatAndHalves);
    r.add(std::string(op) + kChannelsLastSuffix,
          conv_activation_factory(ctx, conv_factory(ctx, Epilogue::None, true), kDepthwiseName))
        .with_dtypes(kFloatAndHalves)
        .refusing(channels_last_check(op, [](const Node& node) { return symmetric_pads_reason(node, ""); }));
  }
}

}  // namespace dnnx::cuda
