// Int8Conv on CUDA (ops/quant/qdq_int8.cc has its inputs; the CPU kernel,
// backends/cpu/quant/qdq_int8_cpu.cc, its arithmetic): cuDNN's int8 convolution on the tensor
// cores (int8_conv_graph.h) between two kernels of ours (int8_kernels.h), three launches:
//   x [N, C, H, W] (int8/uint8)
//   --(int8_nhwc_pad)-->    xp [N, Hp, Wp, Cp] int8: x', x_zp' in the padding, zero channels
//   --(cuDNN, unpadded, w' [Mp, kh, kw, Cp / group] made at plan time)-->  sums [N, OH, OW, Mp] int32
//   --(epilogue: zero point, bias, scales, BatchNorm, Relu, residual)-->    y [N, M, OH, OW]
// 1-D convs run as 2-D ones of height 1.
//
// Note [int8 conv padding]: X's padding must read X's zero point (onnxruntime pads the 8-bit X
// with x_zero_point, so a padded tap adds nothing), and cuDNN pads with zeros. So the pre-kernel
// writes the padded X itself, x_zp' in the border (Note [int8 on tensor cores]), and cuDNN runs
// without padding: exact, at the cost of one pass over X, which the layout change from ONNX's
// NCHW to cuDNN's int8 NHWC needs anyway; the same pass makes uint8 X signed and pads the
// channels to a multiple of 4 (zero channels, whose filter taps are zero too). The layer's
// input and output stay in ONNX's layout (the channels_last pass does not take Int8Conv), so
// the epilogue writes NCHW. What stays on the host, with the reason in plan(): 3-D convs, grouped
// convs whose channels per group are not multiples of 4 (depthwise ones among them), weights
// that leave int8's range after their zero point, and whatever cuDNN's check_support refuses.
//
// Note [int8 nhwc on cuda]: the two layout-changing kernels took 13.1 ms of the int8 ResNet-50's
// 28.5 ms of device time at batch 256 (an H100, session 12: the pre-kernel 96 us and the NCHW
// epilogue 155 us a layer, against 177 us for the conv), more than dnnx's whole fp16 run. So on
// CUDA the channels_last pass makes the int8 convs' regions channels-last at every precision
// (Backend::int8_channels_last; Note [int8 nhwc conv] says what such a conv takes: 8-bit X with C
// a multiple of 4, W of zero points 0, one group), and Int8Conv@NHWC reads X [N, H, W, C] and
// writes Y [N, OH, OW, M] with the epilogue's row-major form (4 channels a thread). X needs a pass
// of its own only where the conv pads or X is uint8 (int8_nhwc_repad: x' with x_zp' in the
// border); a 1x1 conv of int8 X hands X to cuDNN as it is. The arithmetic is unchanged: the CPU's bits.
// Measured on an H100 (session 14; the dnnx.quantize ResNet-50 of bench/bench_cuda_int8.py at
// batch 256, median of 20 runs, the same outputs): fp32 33.46 ms channels-last against 30.60 in
// ONNX's layout, fp16 26.78 against 28.45. No gain yet: that file's activations are uint8, so
// every conv still passes over X (its sign flip), and the repad and row-major epilogue kernels
// divide in int64 per word where the NCHW tiles do 32-bit math once a tile (Note [int8 tiles]).
// So it stays behind DNNX_PROBE_INT8_NHWC=1 (CudaBackend::int8_channels_last; tests/cuda runs it
// bit for bit against the CPU). Next: the producer writing the consumer's signed, padded X.
#include <cstdint>

#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/quant/int8_conv_graph.h"
#include "backends/cuda/quant/int8_layer.h"
#include "ops/layout/channels_last.h"
#include "ops/quant/int_conv.h"

namespace dnnx::cuda {

namespace {

using namespace int8_slot;

constexpr int64_t round4(int64_t v) { return (v + 3) / 4 * 4; }
constexpr size_t round256(size_t v) { return (v + 255) / 256 * 256; }

class Int8ConvKernel final : public Kernel {
 public:
  // nhwc: Int8Conv@NHWC (Note [int8 nhwc on cuda]); x_pass: X goes through int8_nhwc_repad first
  Int8ConvKernel(const CudaContext& ctx, NhwcPad pad, Int8ConvShape shape, Int8Layer layer, DeviceMemory w,
                 std::unique_ptr<Int8ConvGraph> conv, bool nhwc = false, bool x_pass = true)
      : ctx_(ctx), pad_(pad), shape_(shape), layer_(std::move(layer)), channels_(ctx, layer_),
        w_(std::move(w)), conv_(std::move(conv)), nhwc_(nhwc), x_pass_(x_pass) {}

  // Workspace: xp [N, Hp, Wp, Cp] int8 (where X needs its pass), then the sums [N, OH, OW, Mp]
  // int32, then cuDNN's.
  size_t x_bytes() const {
    return x_pass_ ? round256(static_cast<size_t>(pad_.n * pad_.hp * pad_.wp * pad_.cp)) : 0;
  }
  size_t sums_bytes() const {
    return round256(static_cast<size_t>(shape_.n * shape_.oh * shape_.ow * shape_.m) * sizeof(int32_t));
  }
  size_t workspace_bytes() const { return x_bytes() + sums_bytes() + conv_->workspace_bytes(); }

  void run(const KernelArgs& args) const override {
    auto* ws = static_cast<uint8_t*>(args.workspace);
    auto* xp = reinterpret_cast<int8_t*>(ws);
    auto* sums = reinterpret_cast<int32_t*>(ws + x_bytes());
    if (!nhwc_) {
      launch_int8_nhwc_pad(args.in<void>(kX), layer_.x_unsigned, layer_.x_zp_signed, pad_, xp, ctx_.stream);
    } else if (x_pass_) {
      launch_int8_nhwc_repad(args.in<void>(kX), layer_.x_unsigned, layer_.x_zp_signed, pad_, xp, ctx_.stream);
    } else {
      xp = static_cast<int8_t*>(const_cast<void*>(args.in<void>(kX)));  // int8 X, unpadded: cuDNN reads it as it is
    }
    conv_->run(ctx_, xp, static_cast<const int8_t*>(w_.get()), sums, ws + x_bytes() + sums_bytes());
    const void* z = layer_.epilogue.residual ? args.in<void>(kZ) : nullptr;
    const int64_t plane = shape_.oh * shape_.ow;
    // NCHW: the tiled epilogue writes [N, M, plane]; NHWC: the row-major one writes [N * plane, M]
    launch_int8_epilogue(channels_.epilogue(layer_, sums, shape_.n * plane, shape_.m, nhwc_ ? 0 : plane, z),
                         args.out<void>(0), ctx_.stream);
  }

 private:
  const CudaContext& ctx_;
  NhwcPad pad_;
  Int8ConvShape shape_;  // cuDNN's: shape_.m is Mp
  Int8Layer layer_;
  Int8Channels channels_;
  DeviceMemory w_;  // w' [Mp, kh, kw, Cp / group] int8
  std::unique_ptr<Int8ConvGraph> conv_;
  bool nhwc_ = false, x_pass_ = true;
};

// w' [M, Cg, kh, kw] (ONNX's order, made by signed_weights) -> [Mp, kh, kw, Cpg] (KRSC), zeros
// in the padded filters and channels.
std::vector<int8_t> krsc(const std::vector<int8_t>& kcrs, int64_t m, int64_t mp, int64_t cg, int64_t cpg, int64_t taps) {
  std::vector<int8_t> out(static_cast<size_t>(mp * taps * cpg), 0);
  for (int64_t f = 0; f < m; ++f) {
    for (int64_t c = 0; c < cg; ++c) {
      for (int64_t t = 0; t < taps; ++t) {
        out[static_cast<size_t>((f * taps + t) * cpg + c)] = kcrs[static_cast<size_t>((f * cg + c) * taps + t)];
      }
    }
  }
  return out;
}

KernelChoice plan_int8_conv(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                            const std::vector<TensorInfo>& outputs) {
  std::string why = int8_constants_refusal(inputs);
  if (!why.empty()) node_fail<UnsupportedModelError>(node, why);
  const bool nhwc = is_channels_last_op(node.op_type);
  const Shape& stored_x = inputs[kX].info.shape;
  const Shape& stored_w = inputs[kW].info.shape;
  if (nhwc && (stored_x.size() != 4 || stored_w.size() != 4 || stored_x[3] % 4 != 0 || stored_w[3] != stored_x[3])) {
    node_fail<InvalidModelError>(node, "the channels-last int8 conv takes 8-bit X [N, H, W, C] with C a multiple of 4 "
                                       "and W [M, kh, kw, C], got X " + inputs[kX].info.str() + " and W " +
                                       inputs[kW].info.str());
  }
  // ONNX's shapes, for the geometry: the stored ones of Int8Conv@NHWC permuted back
  const Shape xs = nhwc ? to_channels_first(stored_x) : stored_x;
  const Shape ws = nhwc ? Shape{stored_w[0], stored_w[3], stored_w[1], stored_w[2]} : stored_w;
  if (xs.size() != 3 && xs.size() != 4) {
    node_fail<UnsupportedModelError>(node, "the CUDA int8 conv takes 1-D and 2-D convolutions, not " +
                                               std::to_string(xs.size() - 2) + "-D ones");
  }
  const ConvGeometry g = int_conv_geometry(node, xs, ws).expanded_to(2);
  const int64_t n = xs[0], c = xs[1], m = ws[0], group = g.group, cg = c / group, mg = m / group;
  if (nhwc && group != 1) node_fail<InvalidModelError>(node, "the channels-last int8 conv takes one group");
  if (group > 1 && (cg % 4 != 0 || mg % 4 != 0)) {
    node_fail<UnsupportedModelError>(node, "a grouped int8 conv needs multiples of 4 input and output channels per "
                                           "group on cuDNN (" + std::to_string(cg) + " and " + std::to_string(mg) +
                                           " here; depthwise convs among them)");
  }
  NhwcPad pad;
  pad.n = n;
  pad.c = c;
  pad.h = g.input[0];
  pad.w = g.input[1];
  pad.pad_h = g.pads_begin[0];
  pad.pad_w = g.pads_begin[1];
  pad.hp = pad.h + g.pads_begin[0] + g.pads_end[0];
  pad.wp = pad.w + g.pads_begin[1] + g.pads_end[1];
  pad.cp = group == 1 ? round4(c) : c;
  Int8ConvShape s;
  s.n = n;
  s.c = pad.cp;
  s.h = pad.hp;
  s.w = pad.wp;
  s.m = group == 1 ? round4(m) : m;
  s.kh = g.kernel[0];
  s.kw = g.kernel[1];
  s.group = group;
  s.stride_h = g.strides[0];
  s.stride_w = g.strides[1];
  s.dilation_h = g.dilations[0];
  s.dilation_w = g.dilations[1];
  s.oh = g.output[0];
  s.ow = g.output[1];
  // The unpadded conv over the padded X has the layer's output size (pads_end may hold more than
  // the last window reads: a stride's remainder).
  if ((s.h - g.effective_kernel(0)) / s.stride_h + 1 != s.oh || (s.w - g.effective_kernel(1)) / s.stride_w + 1 != s.ow) {
    node_fail<UnsupportedModelError>(node, "the padded input does not give the conv's output size");
  }
  const int64_t taps = s.kh * s.kw;
  SignedWeights sw;
  why = signed_weights(inputs, m, m, cg * taps, cg * taps, [per = cg * taps](int64_t f, int64_t i) { return f * per + i; }, sw);
  if (!why.empty()) node_fail<UnsupportedModelError>(node, why);
  std::unique_ptr<Int8ConvGraph> conv = make_int8_conv_graph(ctx, s, why);
  if (!conv) node_fail<UnsupportedModelError>(node, "cuDNN int8 convolution: " + why);
  Int8Layer layer = int8_layer(node, inputs, outputs, m);
  subtract_zero_point_sums(layer, sw.sums);
  // NCHW: W in ONNX's order, made KRSC here; NHWC: the pass stored W [M, kh, kw, C] already
  // (Cp = C), and signed_weights kept that order, padded to Mp filters
  const std::vector<int8_t> w = nhwc ? sw.values : krsc(sw.values, m, s.m, cg, s.c / group, taps);
  DeviceMemory wd = upload(ctx, w.data(), w.size(), "cudaMemcpyAsync (int8 weights)");
  const std::string types = int8_types_name(inputs);
  const std::string math = int8_math(layer, outputs);
  // Note [int8 nhwc on cuda]: a 1x1 conv (no pads) of int8 X needs no pass over X
  const bool x_pass = !nhwc || layer.x_unsigned || pad.hp != pad.h || pad.wp != pad.w;
  std::string algorithm = std::string(nhwc ? (x_pass ? "X repadded, " : "X as it is, ") : "") + "cuDNN int8 conv (" +
                          types + ", NHWC, int8 tensor cores; " + conv->choice() + ") + requantize epilogue";
  if (inputs.size() > kBnMult && inputs[kBnMult].present) algorithm += " + batchnorm";
  if (layer.epilogue.residual) algorithm += " + residual add";
  if (layer.epilogue.relu) algorithm += " + relu";
  auto kernel = std::make_unique<Int8ConvKernel>(ctx, pad, s, std::move(layer), std::move(wd), std::move(conv), nhwc,
                                                 x_pass);
  KernelChoice choice;
  choice.algorithm = std::move(algorithm);
  choice.math = math;
  choice.workspace_bytes = kernel->workspace_bytes();
  choice.kernel = std::move(kernel);
  return choice;
}

}  // namespace

void register_cuda_int8_conv_kernels(KernelRegistry& r, const CudaContext& ctx) {
  // The 8-bit activations and weights, int32 biases (a device type), float32 scales and outputs.
  r.add("Int8Conv", bind(ctx, plan_int8_conv))
      .with_dtypes({DType::Float32, DType::Int8, DType::UInt8})
      .refusing(int8_clip_refusal);
  // Note [int8 nhwc on cuda]: the channels_last pass asks this before it makes a conv channels-last
  r.add(std::string("Int8Conv") + kChannelsLastSuffix, bind(ctx, plan_int8_conv))
      .with_dtypes({DType::Float32, DType::Int8, DType::UInt8})
      .refusing([](const Node& node) -> std::string {
        if (node.attr_int("group", 1) != 1) return "the channels-last int8 conv takes one group";
        return int8_clip_refusal(node);
      });
}

}  // namespace dnnx::cuda
