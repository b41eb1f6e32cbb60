// MaxPool's and AveragePool's gradients on the CPU. MaxPool: each output's dY goes to the input
// position that won its window, found again from the kept X (the forward keeps the first of
// equal maxima, and so does this). Padding taps never win. AveragePool: each output's
// dY / divisor goes to every tap of its window inside X, the divisor the forward's
// (window_taps_cpu.h: count_include_pad, ceil_mode). Windows overlap when stride < kernel, so dX
// adds up, plane by plane in output order. Every spatial rank runs as 3-D, with unit dims prepended.
#include <algorithm>
#include <limits>

#include "backends/cpu/pool/window_taps_cpu.h"
#include "runtime/kernel_registry.h"
#include "ops/conv/conv_geometry.h"

namespace dnnx {

namespace {

constexpr size_t kKernelRank = 3;  // D, H, W
enum Dim { kD = 0, kH = 1, kW = 2 };

class MaxPoolGradKernel final : public GradKernel {
 public:
  MaxPoolGradKernel(ConvGeometry g, int64_t planes) : g_(std::move(g)), planes_(planes) {}

  // x, dx [N*C planes, D, H, W]; dy [N*C planes, OD, OH, OW].
  void run(const GradArgs& args) const override {
    float* dx = args.d_inputs[0];
    if (!dx) return;
    const float* x = args.in(0);
    const float* dy = args.d_outputs[0];
    std::fill(dx, dx + planes_ * g_.input_size(), 0.0f);
    for (int64_t p = 0; p < planes_; ++p) {
      plane(x + p * g_.input_size(), dy + p * g_.output_size(), dx + p * g_.input_size());
    }
  }

 private:
  void plane(const float* x, const float* dy, float* dx) const {
    const int64_t in_h = g_.input[kH], in_w = g_.input[kW];
    for (int64_t od = 0; od < g_.output[kD]; ++od) {
      const IndexRange td = g_.taps_inside(kD, od);
      for (int64_t oh = 0; oh < g_.output[kH]; ++oh) {
        const IndexRange th = g_.taps_inside(kH, oh);
        for (int64_t ow = 0; ow < g_.output[kW]; ++ow, ++dy) {
          const IndexRange tw = g_.taps_inside(kW, ow);
          float best = -std::numeric_limits<float>::infinity();
          int64_t at = -1;
          for (int64_t kd = td.lo; kd < td.hi; ++kd) {
            const int64_t id = g_.window_start(kD, od) + kd * g_.dilations[kD];
            for (int64_t kh = th.lo; kh < th.hi; ++kh) {
              const int64_t ih = g_.window_start(kH, oh) + kh * g_.dilations[kH];
              for (int64_t kw = tw.lo; kw < tw.hi; ++kw) {
                const int64_t i = (id * in_h + ih) * in_w + g_.window_start(kW, ow) + kw * g_.dilations[kW];
                if (x[i] > best || at < 0) {
                  best = x[i];
                  at = i;
                }
              }
            }
          }
          if (at >= 0) dx[at] += *dy;
        }
      }
    }
  }

  ConvGeometry g_;  // expanded to 3 spatial dims
  int64_t planes_;  // N * C
};

// The pool's window over X [N, C, spatial...], expanded to 3 spatial dims.
ConvGeometry pool_geometry(const GradRequest& r) {
  const Shape& x = r.inputs[0].info.shape;
  return make_conv_geometry(r.node, WindowOp::Pool, Shape(x.begin() + 2, x.end()), r.node.attr_ints("kernel_shape", {}))
      .expanded_to(kKernelRank);
}

int64_t pool_planes(const GradRequest& r) { return r.inputs[0].info.shape[0] * r.inputs[0].info.shape[1]; }

GradChoice plan_max_pool_grad(const GradRequest& r) {
  GradChoice choice;
  choice.algorithm = "argmax scatter";
  choice.kernel = std::make_unique<MaxPoolGradKernel>(pool_geometry(r), pool_planes(r));
  return choice;
}

class AvgPoolGradKernel final : public GradKernel {
 public:
  AvgPoolGradKernel(ConvGeometry g, int64_t planes, bool count_include_pad)
      : g_(std::move(g)), planes_(planes), taps_{window_table(g_, kD, count_include_pad),
                                                  window_table(g_, kH, count_include_pad),
                                                  window_table(g_, kW, count_include_pad)} {}

  // dx [N*C planes, D, H, W]; dy [N*C planes, OD, OH, OW].
  void run(const GradArgs& args) const override {
    float* dx = args.d_inputs[0];
    if (!dx) return;
    const float* dy = args.d_outputs[0];
    std::fill(dx, dx + planes_ * g_.input_size(), 0.0f);
    for (int64_t p = 0; p < planes_; ++p) plane(dy + p * g_.output_size(), dx + p * g_.input_size());
  }

 private:
  void plane(const float* dy, float* dx) const {
    const int64_t in_h = g_.input[kH], in_w = g_.input[kW];
    for (const WindowTaps& td : taps_[kD]) {
      for (const WindowTaps& th : taps_[kH]) {
        for (const WindowTaps& tw : taps_[kW]) {
          const int64_t divisor = td.counted * th.counted * tw.counted;
          const float g = divisor > 0 ? *dy / static_cast<float>(divisor) : 0.0f;
          ++dy;
          for (int64_t kd = td.lo; kd < td.hi; ++kd) {
            const int64_t id = td.start + kd * g_.dilations[kD];
            for (int64_t kh = th.lo; kh < th.hi; ++kh) {
              float* row = dx + (id * in_h + th.start + kh * g_.dilations[kH]) * in_w;
              for (int64_t kw = tw.lo; kw < tw.hi; ++kw) row[tw.start + kw * g_.dilations[kW]] += g;
            }
          }
        }
      }
    }
  }

  ConvGeometry g_;  // expanded to 3 spatial dims
  int64_t planes_;  // N * C
  std::vector<WindowTaps> taps_[kKernelRank];  // per dim, per output index
};

GradChoice plan_avg_pool_grad(const GradRequest& r) {
  GradChoice choice;
  choice.algorithm = "window scatter";
  choice.kernel = std::make_unique<AvgPoolGradKernel>(pool_geometry(r), pool_planes(r),
                                                      r.node.attr_int("count_include_pad", 0) != 0);
  return choice;
}

}  // namespace

void register_cpu_pool_grad_kernels(KernelRegistry& r) {
  r.at("MaxPool").with_gradient(plan_max_pool_grad);
  r.at("AveragePool").with_gradient(plan_avg_pool_grad);
}

}  // namespace dnnx
