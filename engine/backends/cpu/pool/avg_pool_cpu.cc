// AveragePool on the CPU, NCHW float32: a direct loop over each output position's window.
// Per dim and output index a table, built at plan time, holds the taps inside X and how many
// taps the divisor counts; a window's divisor is the product of its dims' counts (the window is
// a box). Every spatial rank runs as 3-D, with unit dims prepended (ConvGeometry::expanded_to).
// The planes are split across the CPU thread pool.
#include <algorithm>
#include <vector>

#include "runtime/kernel_registry.h"
#include "backends/cpu/runtime/thread_pool.h"
#include "ops/conv/conv_geometry.h"
#include "backends/cpu/pool/window_taps_cpu.h"

namespace dnnx {

namespace {

constexpr size_t kKernelRank = 3;  // D, H, W
enum Dim { kD = 0, kH = 1, kW = 2 };

class AvgPoolKernel final : public Kernel {
 public:
  AvgPoolKernel(ConvGeometry g, int64_t planes, bool count_include_pad, int workers)
      : g_(std::move(g)), planes_(planes), workers_(workers), taps_{window_table(g_, kD, count_include_pad),
                                                 window_table(g_, kH, count_include_pad),
                                                 window_table(g_, kW, count_include_pad)} {}

  // x [N*C planes, D, H, W] -> y [N*C planes, OD, OH, OW].
  void run(const KernelArgs& args) const override {
    const float* x = args.in(0);
    float* y = args.out(0);
    cpu_thread_pool().parallel_for(planes_, [&](int64_t begin, int64_t end, int) {
      for (int64_t p = begin; p < end; ++p) pool_plane(x + p * g_.input_size(), y + p * g_.output_size());
    }, workers_);
  }

 private:
  void pool_plane(const float* x, float* y) const {
    const int64_t in_h = g_.input[kH], in_w = g_.input[kW];
    for (const WindowTaps& td : taps_[kD]) {
      for (const WindowTaps& th : taps_[kH]) {
        for (const WindowTaps& tw : taps_[kW]) {
          float sum = 0.0f;
          for (int64_t kd = td.lo; kd < td.hi; ++kd) {
            const int64_t id = td.start + kd * g_.dilations[kD];
            for (int64_t kh = th.lo; kh < th.hi; ++kh) {
              const float* row = x + (id * in_h + th.start + kh * g_.dilations[kH]) * in_w;
              for (int64_t kw = tw.lo; kw < tw.hi; ++kw) sum += row[tw.start + kw * g_.dilations[kW]];
            }
          }
          const int64_t divisor = td.counted * th.counted * tw.counted;
          *y++ = divisor > 0 ? sum / static_cast<float>(divisor) : 0.0f;
        }
      }
    }
  }

  ConvGeometry g_;  // expanded to 3 spatial dims
  int64_t planes_;  // N * C
  int workers_;     // the most the planes are split across
  std::vector<WindowTaps> taps_[kKernelRank];  // per dim, per output index
};

KernelChoice plan_avg_pool(const Node& node, const std::vector<ValueInfo>& inputs,
                           const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;
  const ConvGeometry g = make_conv_geometry(node, WindowOp::Pool, Shape(x.begin() + 2, x.end()),
                                            node.attr_ints("kernel_shape", {}));
  const ConvGeometry g3 = g.expanded_to(kKernelRank);
  const int workers = plan_workers(x[0] * x[1], g3.output_size() * g3.kernel_size());
  KernelChoice choice;
  choice.algorithm = with_threads("direct", workers);
  choice.kernel = std::make_unique<AvgPoolKernel>(g3, x[0] * x[1], node.attr_int("count_include_pad", 0) != 0,
                                                  workers);
  return choice;
}

}  // namespace

void register_cpu_avg_pool_kernels(KernelRegistry& r) { r.add("AveragePool", plan_avg_pool); }

}  // namespace dnnx
