// CumSum and CumProd on the CPU (ops/reduce/cumulative.h), forward and the gradients:
// x [outer, n, inner] walked along n, from the end when reverse; exclusive writes the fold
// before adding the element.
//   CumSum's gradient: dx = the cumulative sum of dy in the other direction, exclusive alike
//   (y_k = sum of x_j for j before k means dx_j = sum of dy_k for k after j).
//   CumProd's gradient, without a division (exact where x holds zeros): with s the scan position
//   (from the end when reverse), P_s = x_0 ... x_{s-1} (the exclusive prefix product) and
//   inclusive: dx_j = P_j * S_j,  S_j = dy_j + x_{j+1} S_{j+1}      (S_{n-1} = dy_{n-1})
//   exclusive: dx_j = P_j * T_j,  T_j = dy_{j+1} + x_{j+1} T_{j+1}  (T_{n-1} = 0)
//   (S_j = the sum over k >= j of dy_k x_{j+1} ... x_k; T_j likewise over k > j, to x_{k-1}):
//   one forward pass writes P into dx, one backward pass multiplies in S or T.
#include "backends/cpu/runtime/element_type.h"
#include "ops/reduce/cumulative.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

enum class Cumulative { Sum, Prod };

template <Cumulative C, class T>
void cumulate(const CumulativeGeometry& g, bool reverse, const T* x, T* y) {
  for (int64_t o = 0; o < g.outer; ++o) {
    for (int64_t i = 0; i < g.inner; ++i) {
      const int64_t base = o * g.n * g.inner + i;
      T acc = C == Cumulative::Sum ? T(0) : T(1);
      for (int64_t s = 0; s < g.n; ++s) {
        const int64_t at = base + (reverse ? g.n - 1 - s : s) * g.inner;
        const T v = x[at];
        if (g.exclusive) y[at] = acc;
        acc = C == Cumulative::Sum ? static_cast<T>(acc + v) : static_cast<T>(acc * v);
        if (!g.exclusive) y[at] = acc;
      }
    }
  }
}

template <Cumulative C, class T>
class CumulativeKernel final : public Kernel {
 public:
  explicit CumulativeKernel(CumulativeGeometry g) : g_(g) {}
  void run(const KernelArgs& args) const override { cumulate<C>(g_, g_.reverse, args.in<T>(0), args.out<T>(0)); }

 private:
  CumulativeGeometry g_;
};

template <Cumulative C>
KernelChoice plan_cumulative(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const CumulativeGeometry g = cumulative_geometry(node, inputs);
  KernelChoice choice;
  choice.algorithm = "scan";
  choice.kernel = with_dtype(inputs[0].info.dtype, [&](auto t) -> std::unique_ptr<Kernel> {
    return std::make_unique<CumulativeKernel<C, decltype(t)>>(g);
  });
  return choice;
}

class CumSumGradKernel final : public GradKernel {
 public:
  explicit CumSumGradKernel(CumulativeGeometry g) : g_(g) {}
  void run(const GradArgs& args) const override {
    float* dx = args.d_inputs[0];
    if (dx) cumulate<Cumulative::Sum>(g_, !g_.reverse, args.d_outputs[0], dx);
  }

 private:
  CumulativeGeometry g_;
};

GradChoice plan_cumsum_grad(const GradRequest& r) {
  GradChoice choice;
  choice.algorithm = "scan";
  choice.kernel = std::make_unique<CumSumGradKernel>(cumulative_geometry(r.node, r.inputs));
  return choice;
}

class CumProdGradKernel final : public GradKernel {
 public:
  explicit CumProdGradKernel(CumulativeGeometry g) : g_(g) {}
  void run(const GradArgs& args) const override {
    float* dx = args.d_inputs[0];
    if (!dx) return;
    const float* x = args.in(0);
    const float* dy = args.d_outputs[0];
    for (int64_t o = 0; o < g_.outer; ++o) {
      for (int64_t i = 0; i < g_.inner; ++i) {
        const int64_t base = o * g_.n * g_.inner + i;
        auto at = [&](int64_t s) { return base + (g_.reverse ? g_.n - 1 - s : s) * g_.inner; };
        double prefix = 1.0;
        for (int64_t s = 0; s < g_.n; ++s) {
          dx[at(s)] = static_cast<float>(prefix);
          prefix *= x[at(s)];
        }
        double acc = 0.0;  // S_s or T_s
        for (int64_t s = g_.n - 1; s >= 0; --s) {
          if (g_.exclusive) {
            acc = s + 1 < g_.n ? dy[at(s + 1)] + x[at(s + 1)] * acc : 0.0;
          } else {
            acc = dy[at(s)] + (s + 1 < g_.n ? x[at(s + 1)] * acc : 0.0);
          }
          dx[at(s)] = static_cast<float>(dx[at(s)] * acc);
        }
      }
    }
  }

 private:
  CumulativeGeometry g_;
};

GradChoice plan_cumprod_grad(const GradRequest& r) {
  GradChoice choice;
  choice.algorithm = "scan";
  choice.kernel = std::make_unique<CumProdGradKernel>(cumulative_geometry(r.node, r.inputs));
  return choice;
}

}  // namespace

void register_cpu_cumulative_kernels(KernelRegistry& r) {
  r.add("CumSum", plan_cumulative<Cumulative::Sum>).with_gradient(plan_cumsum_grad);
  r.add("CumProd", plan_cumulative<Cumulative::Prod>).with_gradient(plan_cumprod_grad);
}

}  // namespace dnnx
