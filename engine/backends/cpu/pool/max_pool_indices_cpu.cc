// MaxPool with Indices on the CPU (float32, int8, uint8): a direct loop over each output's window
// (taps in the padding never win; the first maximum in window order wins ties, as the plain kernel
// and its gradient keep it), writing Y and, as int64, ONNX's flattened index of the maximum in X
// [N, C, spatial...]: plane * prod(spatial) + the spatial index in row-major order (storage_order
// 0) or column-major order (storage_order 1; onnxruntime's h + w * H in 2-D).
#include <limits>

#include "backends/cpu/pool/max_pool_indices_cpu.h"
#include "ops/conv/conv_geometry.h"

namespace dnnx {

namespace {

constexpr size_t kKernelRank = 3;  // D, H, W

template <class T>
class MaxPoolIndicesKernel final : public Kernel {
 public:
  MaxPoolIndicesKernel(ConvGeometry g, int64_t planes, bool column_major, size_t spatial_rank)
      : g_(std::move(g)), planes_(planes), column_major_(column_major), spatial_rank_(spatial_rank) {}

  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    T* y = args.out<T>(0);
    auto* indices = args.out<int64_t>(1);
    const int64_t in_d = g_.input[0], in_h = g_.input[1], in_w = g_.input[2];
    int64_t o = 0;
    for (int64_t p = 0; p < planes_; ++p) {
      const T* plane = x + p * g_.input_size();
      for (int64_t od = 0; od < g_.output[0]; ++od) {
        for (int64_t oh = 0; oh < g_.output[1]; ++oh) {
          for (int64_t ow = 0; ow < g_.output[2]; ++ow, ++o) {
            T best = std::numeric_limits<T>::lowest();  // the first tap replaces it
            int64_t bd = -1, bh = -1, bw = -1;
            const IndexRange td = g_.taps_inside(0, od), th = g_.taps_inside(1, oh), tw = g_.taps_inside(2, ow);
            for (int64_t kd = td.lo; kd < td.hi; ++kd) {
              const int64_t d = g_.window_start(0, od) + kd * g_.dilations[0];
              for (int64_t kh = th.lo; kh < th.hi; ++kh) {
                const int64_t h = g_.window_start(1, oh) + kh * g_.dilations[1];
                for (int64_t kw = tw.lo; kw < tw.hi; ++kw) {
                  const int64_t w = g_.window_start(2, ow) + kw * g_.dilations[2];
                  const T v = plane[(d * in_h + h) * in_w + w];
                  if (v > best || bd < 0) {
                    best = v;
                    bd = d, bh = h, bw = w;
                  }
                }
              }
            }
            y[o] = best;
            indices[o] = bd < 0 ? -1 : p * g_.input_size() + spatial_index(bd, bh, bw, in_d, in_h, in_w);
          }
        }
      }
    }
  }

 private:
  // Row-major (d * H + h) * W + w, or column-major over the node's own spatial dims.
  int64_t spatial_index(int64_t d, int64_t h, int64_t w, int64_t in_d, int64_t in_h, int64_t) const {
    if (!column_major_) return (d * in_h + h) * g_.input[2] + w;
    if (spatial_rank_ == 1) return w;
    if (spatial_rank_ == 2) return h + w * in_h;
    return d + in_d * (h + in_h * w);
  }

  ConvGeometry g_;  // expanded to 3 spatial dims
  int64_t planes_;
  bool column_major_;
  size_t spatial_rank_;
};

}  // namespace

KernelChoice plan_max_pool_with_indices(const Node& node, const std::vector<ValueInfo>& inputs) {
  const Shape& x = inputs[0].info.shape;
  const ConvGeometry g = make_conv_geometry(node, WindowOp::Pool, Shape(x.begin() + 2, x.end()),
                                            node.attr_ints("kernel_shape", {}));
  KernelChoice choice;
  choice.algorithm = "direct (with Indices)";
  auto make = [&](auto zero) -> std::unique_ptr<Kernel> {
    return std::make_unique<MaxPoolIndicesKernel<decltype(zero)>>(
        g.expanded_to(kKernelRank), x[0] * x[1], node.attr_int("storage_order", 0) != 0, g.rank());
  };
  switch (inputs[0].info.dtype) {
    case DType::Int8: choice.kernel = make(int8_t{}); break;
    case DType::UInt8: choice.kernel = make(uint8_t{}); break;
    default: choice.kernel = make(float{});
  }
  return choice;
}

}  // namespace dnnx
