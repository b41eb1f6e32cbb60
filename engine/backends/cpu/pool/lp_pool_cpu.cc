// LpPool on the CPU (ops/pool/lp_pool.cc): a direct loop over each output position's taps
// inside X, every spatial rank run as 3-D (ConvGeometry::expanded_to), planes across the pool.
#include <cmath>

#include "backends/cpu/runtime/thread_pool.h"
#include "ops/conv/conv_geometry.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

constexpr size_t kKernelRank = 3;  // D, H, W

template <class T>
class LpPoolKernel final : public Kernel {
 public:
  LpPoolKernel(ConvGeometry g, int64_t planes, int64_t p, int workers)
      : g_(std::move(g)), planes_(planes), p_(p), workers_(workers) {}

  // x [N*C planes, D, H, W] -> y [N*C planes, OD, OH, OW].
  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    T* y = args.out<T>(0);
    cpu_thread_pool().parallel_for(planes_, [&](int64_t begin, int64_t end, int) {
      for (int64_t plane = begin; plane < end; ++plane) {
        pool_plane(x + plane * g_.input_size(), y + plane * g_.output_size());
      }
    }, workers_);
  }

 private:
  T power(T v) const {
    v = std::fabs(v);
    if (p_ == 1) return v;
    if (p_ == 2) return v * v;
    return std::pow(v, static_cast<T>(p_));
  }

  void pool_plane(const T* x, T* y) const {
    const int64_t in_h = g_.input[1], in_w = g_.input[2];
    const T inv_p = T(1) / static_cast<T>(p_);
    for (int64_t od = 0; od < g_.output[0]; ++od) {
      const IndexRange rd = g_.taps_inside(0, od);
      for (int64_t oh = 0; oh < g_.output[1]; ++oh) {
        const IndexRange rh = g_.taps_inside(1, oh);
        for (int64_t ow = 0; ow < g_.output[2]; ++ow) {
          const IndexRange rw = g_.taps_inside(2, ow);
          T sum = 0;
          for (int64_t kd = rd.lo; kd < rd.hi; ++kd) {
            const int64_t id = g_.window_start(0, od) + kd * g_.dilations[0];
            for (int64_t kh = rh.lo; kh < rh.hi; ++kh) {
              const T* row = x + (id * in_h + g_.window_start(1, oh) + kh * g_.dilations[1]) * in_w;
              for (int64_t kw = rw.lo; kw < rw.hi; ++kw) sum += power(row[g_.window_start(2, ow) + kw * g_.dilations[2]]);
            }
          }
          *y++ = p_ == 1 ? sum : p_ == 2 ? std::sqrt(sum) : std::pow(sum, inv_p);
        }
      }
    }
  }

  ConvGeometry g_;  // expanded to 3 spatial dims
  int64_t planes_;  // N * C
  int64_t p_;
  int workers_;
};

KernelChoice plan_lp_pool(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;
  const ConvGeometry g = make_conv_geometry(node, WindowOp::Pool, Shape(x.begin() + 2, x.end()),
                                            node.attr_ints("kernel_shape", {}));
  const ConvGeometry g3 = g.expanded_to(kKernelRank);
  const int workers = plan_workers(x[0] * x[1], g3.output_size() * g3.kernel_size());
  KernelChoice choice;
  choice.algorithm = with_threads("direct", workers);
  choice.kernel = std::make_unique<LpPoolKernel<float>>(g3, x[0] * x[1], node.attr_int("p", 2), workers);
  return choice;
}

}  // namespace

void register_cpu_lp_pool_kernels(KernelRegistry& r) { r.add("LpPool", plan_lp_pool); }

}  // namespace dnnx
