// ConvInteger and QLinearConv on the CPU (ops/quant/conv_integer.cc has their meaning; a
// QLinearConv with constant weights runs Int8Conv's kernel instead: qdq_int8_cpu.h), as
// im2col + the integer GEMM (Note [int8 gemm]): per image and group, X minus its zero point into
// int16 columns [C/group * k, out] (a padded tap reads 0: x_zero_point minus itself), W minus
// its zero points into int16 [M/group, C/group * k] once per run, the int32 product, then the
// epilogue: the sums (ConvInteger) or bias and requantization (QLinearConv, Note
// [requantization] in quant_codec.h). 1-D and 2-D windows run as 3-D ones with unit dims.
#include <algorithm>

#include "backends/cpu/quant/int_gemm_cpu.h"
#include "backends/cpu/quant/qdq_int8_cpu.h"
#include "backends/cpu/quant/quant_codec.h"
#include "backends/cpu/runtime/thread_pool.h"
#include "ops/quant/int_conv.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

struct Slots {
  int x = 0, w = 1, x_zp = -1, w_zp = -1;
  int x_scale = -1, w_scale = -1, y_scale = -1, y_zp = -1, bias = -1;  // QLinearConv only
};

struct IntConvPlan {
  ConvGeometry g;  // expanded to 3 spatial dims
  int64_t batch = 0, channels = 0, filters = 0;
  Slots slots;
  bool w_zp_per_channel = false, w_scale_per_channel = false;
  int workers = 1;

  int64_t group_channels() const { return channels / g.group; }
  int64_t group_filters() const { return filters / g.group; }
  int64_t rows() const { return group_channels() * g.kernel_size(); }  // the GEMM's K
  int64_t columns() const { return g.output_size(); }                  // the GEMM's N
  size_t w16_elems() const { return static_cast<size_t>(filters * rows()); }
  size_t col_elems() const { return static_cast<size_t>(rows() * columns()); }
  size_t workspace_bytes() const {
    return (w16_elems() + col_elems()) * sizeof(int16_t) + 64 +
           static_cast<size_t>(group_filters() * columns()) * sizeof(int32_t);
  }
};

// cols[(c, taps), out] = x[c, window tap] - zero point, 0 outside X: one image's group.
template <class TX>
void im2col_s16(const IntConvPlan& p, const TX* x, int32_t zp, int16_t* cols) {
  const ConvGeometry& g = p.g;
  const int64_t in_d = g.input[0], in_h = g.input[1], in_w = g.input[2];
  const int64_t out_d = g.output[0], out_h = g.output[1], out_w = g.output[2];
  int16_t* dst = cols;
  for (int64_t c = 0; c < p.group_channels(); ++c) {
    const TX* plane = x + c * in_d * in_h * in_w;
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
          for (int64_t od = 0; od < out_d; ++od) {
            const int64_t id = g.window_start(0, od) + kd * g.dilations[0];
            for (int64_t oh = 0; oh < out_h; ++oh) {
              const int64_t ih = g.window_start(1, oh) + kh * g.dilations[1];
              const bool row_inside = id >= 0 && id < in_d && ih >= 0 && ih < in_h;
              const TX* line = plane + (id * in_h + ih) * in_w;
              for (int64_t ow = 0; ow < out_w; ++ow) {
                const int64_t iw = g.window_start(2, ow) + kw * g.dilations[2];
                *dst++ = row_inside && iw >= 0 && iw < in_w ? static_cast<int16_t>(static_cast<int32_t>(line[iw]) - zp) : 0;
              }
            }
          }
        }
      }
    }
  }
}

// TY int32_t: ConvInteger's sums; int8_t/uint8_t: QLinearConv's requantized output.
template <class TX, class TW, class TY>
class IntConvKernel final : public Kernel {
 public:
  explicit IntConvKernel(IntConvPlan plan) : p_(std::move(plan)) {}

  void run(const KernelArgs& args) const override {
    const Slots& s = p_.slots;
    auto* w16 = static_cast<int16_t*>(args.workspace);
    int16_t* cols = w16 + p_.w16_elems();
    auto address = reinterpret_cast<uintptr_t>(cols + p_.col_elems());
    auto* c32 = reinterpret_cast<int32_t*>((address + 63) & ~uintptr_t{63});
    const TX* x = args.in<TX>(s.x);
    const TX x_zp = s.x_zp >= 0 ? args.in<TX>(s.x_zp)[0] : TX{};
    const TW* w_zp = s.w_zp >= 0 ? args.in<TW>(s.w_zp) : nullptr;
    minus_zero_point(args.in<TW>(s.w), p_.filters, p_.rows(), p_.rows(), w_zp,
                     p_.w_zp_per_channel ? ParamSpread::PerRow : ParamSpread::PerTensor, w16);
    const int64_t in_image = p_.channels * p_.g.input_size(), in_group = p_.group_channels() * p_.g.input_size();
    const int64_t mg = p_.group_filters(), n = p_.columns();
    TY* y = args.out<TY>(0);
    for (int64_t b = 0; b < p_.batch; ++b) {
      for (int64_t grp = 0; grp < p_.g.group; ++grp) {
        im2col_s16(p_, x + b * in_image + grp * in_group, x_zp, cols);
        gemm_s16(mg, n, p_.rows(), w16 + grp * mg * p_.rows(), cols, c32, p_.workers);
        TY* out = y + (b * p_.filters + grp * mg) * n;
        if constexpr (std::is_same_v<TY, int32_t>) {
          std::copy(c32, c32 + mg * n, out);
        } else {
          requantize(args, grp * mg, c32, out);
        }
      }
    }
  }

 private:
  // Filters [first, first + M/group): (sum + B[m]) * (x_scale * w_scale[m] / y_scale), quantized.
  void requantize(const KernelArgs& args, int64_t first, const int32_t* c32, TY* out) const {
    const Slots& s = p_.slots;
    const float x_scale = args.in<float>(s.x_scale)[0], y_scale = args.in<float>(s.y_scale)[0];
    const float* w_scale = args.in<float>(s.w_scale);
    const int32_t* bias = s.bias >= 0 ? args.in<int32_t>(s.bias) : nullptr;
    const TY y_zp = args.in<TY>(s.y_zp)[0];
    const int64_t n = p_.columns();
    for (int64_t m = 0; m < p_.group_filters(); ++m) {
      const int64_t filter = first + m;
      const float multiplier = x_scale * w_scale[p_.w_scale_per_channel ? filter : 0] / y_scale;
      const int32_t add = bias ? bias[filter] : 0;
      for (int64_t j = 0; j < n; ++j) {
        out[m * n + j] = IntCodec<TY>::quantize(static_cast<float>(c32[m * n + j] + add) * multiplier, y_zp,
                                                DType::Float32, true);
      }
    }
  }

  IntConvPlan p_;
};

bool present(const std::vector<ValueInfo>& inputs, size_t i) { return i < inputs.size() && inputs[i].present; }

IntConvPlan base_plan(const Node& node, const Shape& x, const Shape& w) {
  IntConvPlan p;
  p.g = int_conv_geometry(node, x, w).expanded_to(3);
  p.batch = x[0];
  p.channels = x[1];
  p.filters = w[0];
  p.workers = plan_workers(p.group_filters(), p.rows() * p.columns());
  return p;
}

template <class TY>
KernelChoice make_choice(IntConvPlan plan, DType tx, DType tw) {
  KernelChoice choice;
  choice.workspace_bytes = plan.workspace_bytes();
  choice.kernel = with_int8_type(tx, [&](auto x) {
    return with_int8_type(tw, [&](auto w) -> std::unique_ptr<Kernel> {
      return std::make_unique<IntConvKernel<decltype(x), decltype(w), TY>>(plan);
    });
  });
  choice.algorithm = with_threads(std::string("im2col+") + dtype_name(tx) + "x" + dtype_name(tw) + " gemm", plan.workers);
  choice.math = "int8, int32 accumulation";
  return choice;
}

KernelChoice plan_conv_integer(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const Shape& w = inputs[1].info.shape;
  IntConvPlan p = base_plan(node, inputs[0].info.shape, w);
  if (present(inputs, 2)) p.slots.x_zp = 2;
  if (present(inputs, 3)) {
    p.slots.w_zp = 3;
    p.w_zp_per_channel = per_channel_param(node, w, inputs[3].info.shape, "w_zero_point");
  }
  return make_choice<int32_t>(std::move(p), inputs[0].info.dtype, inputs[1].info.dtype);
}

KernelChoice plan_qlinear_conv(const Node& node, const std::vector<ValueInfo>& inputs,
                               const std::vector<TensorInfo>& outputs) {
  // constant weights (every file quantize_static writes): the int8 layers' kernel
  if (std::optional<KernelChoice> fast = plan_qlinear_conv_int8(node, inputs, outputs)) return std::move(*fast);
  const Shape& w = inputs[3].info.shape;
  IntConvPlan p = base_plan(node, inputs[0].info.shape, w);
  p.slots = Slots{0, 3, 2, 5, 1, 4, 6, 7, present(inputs, 8) ? 8 : -1};
  p.w_zp_per_channel = per_channel_param(node, w, inputs[5].info.shape, "w_zero_point");
  p.w_scale_per_channel = per_channel_param(node, w, inputs[4].info.shape, "w_scale");
  return with_int8_type(outputs[0].dtype, [&](auto y) {
    return make_choice<decltype(y)>(std::move(p), inputs[0].info.dtype, inputs[3].info.dtype);
  });
}

}  // namespace

void register_cpu_conv_integer_kernels(KernelRegistry& r) {
  r.add("ConvInteger", plan_conv_integer).with_dtypes(int8_types());
  r.add("QLinearConv", plan_qlinear_conv).with_dtypes(int8_types());
}

}  // namespace dnnx
