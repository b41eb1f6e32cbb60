// MaxPool on the CPU, NCHW float32: a direct loop over each output position's window. Taps in
// the padding count as -inf, so they never win. The planes are split across the CPU thread pool. Every spatial rank runs as 3-D, with unit dims
// prepended (ConvGeometry::expanded_to).
#include <algorithm>
#include <limits>
#include <vector>

#include "runtime/kernel_registry.h"
#include "backends/cpu/max_pool_indices_cpu.h"
#include "backends/cpu/thread_pool.h"
#include "ops/conv_geometry.h"

namespace dnnx {

namespace {

constexpr size_t kKernelRank = 3;  // D, H, W
enum Dim { kD = 0, kH = 1, kW = 2 };

// D and H: the taps of one output index's window that read inside the input.
struct TapRange {
  int64_t start;     // the window's first input index (negative inside the begin padding)
  IndexRange taps;   // tap k reads start + k * dilation
};

std::vector<TapRange> tap_table(const ConvGeometry& g, size_t dim) {
  std::vector<TapRange> table;
  for (int64_t o = 0; o < g.output[dim]; ++o) table.push_back({g.window_start(dim, o), g.taps_inside(dim, o)});
  return table;
}

// W, the other way round: for tap kw, the output columns [lo, hi) that read inside the input
// row, at row[ow * stride + offset]. Looping over ow innermost vectorises.
struct ColumnRange {
  int64_t offset;
  IndexRange columns;
};

std::vector<ColumnRange> column_table(const ConvGeometry& g) {
  std::vector<ColumnRange> table;
  for (int64_t k = 0; k < g.kernel[kW]; ++k) {
    table.push_back({k * g.dilations[kW] - g.pads_begin[kW], g.outputs_inside(kW, k)});
  }
  return table;
}

class MaxPoolKernel final : public Kernel {
 public:
  MaxPoolKernel(ConvGeometry g, int64_t planes, int workers)
      : g_(std::move(g)), planes_(planes), workers_(workers), taps_d_(tap_table(g_, kD)),
        taps_h_(tap_table(g_, kH)), columns_(column_table(g_)) {}

  // x [N*C planes, D, H, W] -> y [N*C planes, OD, OH, OW].
  void run(const KernelArgs& args) const override {
    const float* x = args.in(0);
    float* y = args.out(0);
    cpu_thread_pool().parallel_for(planes_, [&](int64_t begin, int64_t end, int) {
      for (int64_t p = begin; p < end; ++p) pool_plane(x + p * g_.input_size(), y + p * g_.output_size());
    }, workers_);
  }

 private:
  // Each output row starts at -inf (what the padding holds) and takes the max with every tap.
  void pool_plane(const float* x, float* y) const {
    const int64_t in_h = g_.input[kH], in_w = g_.input[kW], out_w = g_.output[kW];
    const int64_t stride_w = g_.strides[kW];
    for (const TapRange& td : taps_d_) {
      for (const TapRange& th : taps_h_) {
        std::fill(y, y + out_w, -std::numeric_limits<float>::infinity());
        for (int64_t kd = td.taps.lo; kd < td.taps.hi; ++kd) {
          const int64_t id = td.start + kd * g_.dilations[kD];
          for (int64_t kh = th.taps.lo; kh < th.taps.hi; ++kh) {
            const float* row = x + (id * in_h + th.start + kh * g_.dilations[kH]) * in_w;
            for (const ColumnRange& c : columns_) {
              for (int64_t ow = c.columns.lo; ow < c.columns.hi; ++ow) {
                y[ow] = std::max(y[ow], row[ow * stride_w + c.offset]);
              }
            }
          }
        }
        y += out_w;
      }
    }
  }

  ConvGeometry g_;  // expanded to 3 spatial dims
  int64_t planes_;  // N * C
  int workers_;     // the most the planes are split across
  std::vector<TapRange> taps_d_;  // per output depth index
  std::vector<TapRange> taps_h_;  // per output row
  std::vector<ColumnRange> columns_;  // per kernel column
};

KernelChoice plan_max_pool(const Node& node, const std::vector<ValueInfo>& inputs,
                           const std::vector<TensorInfo>&) {
  if (node.has_output(1)) return plan_max_pool_with_indices(node, inputs);  // Indices: max_pool_indices_cpu.cc
  const Shape& x = inputs[0].info.shape;
  const ConvGeometry g = make_conv_geometry(node, WindowOp::Pool, Shape(x.begin() + 2, x.end()),
                                            node.attr_ints("kernel_shape", {}));
  const ConvGeometry g3 = g.expanded_to(kKernelRank);
  const int workers = plan_workers(x[0] * x[1], g3.output_size() * g3.kernel_size());
  KernelChoice choice;
  choice.algorithm = with_threads("direct", workers);
  choice.kernel = std::make_unique<MaxPoolKernel>(g3, x[0] * x[1], workers);
  return choice;
}

}  // namespace

void register_cpu_pool_kernels(KernelRegistry& r) { r.add("MaxPool", plan_max_pool); }

}  // namespace dnnx
