// Hardmax on the CPU: x viewed as [outer, n, inner] (softmax_geometry); along n, y is 1 at the
// first maximum and 0 elsewhere (a NaN is never the maximum unless every element is NaN, then
// the first: onnxruntime's first-index rule over `>`).
// Its gradient is zero: y is piecewise constant in x (a jump where two maxima tie, no derivative
// there), so dX = 0 everywhere, as autograd frameworks give for argmax-based one-hots.
#include <algorithm>
#include <type_traits>

#include "backends/cpu/runtime/element_type.h"
#include "ops/normalization/softmax.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

template <class T>
class HardmaxKernel final : public Kernel {
 public:
  explicit HardmaxKernel(SoftmaxGeometry g) : g_(g) {}
  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    T* y = args.out<T>(0);
    for (int64_t o = 0; o < g_.outer; ++o) {
      for (int64_t i = 0; i < g_.inner; ++i) {
        const int64_t base = o * g_.n * g_.inner + i;
        int64_t best = 0;
        for (int64_t k = 1; k < g_.n; ++k) {
          if (x[base + k * g_.inner] > x[base + best * g_.inner]) best = k;
        }
        for (int64_t k = 0; k < g_.n; ++k) y[base + k * g_.inner] = k == best ? T(1) : T(0);
      }
    }
  }

 private:
  SoftmaxGeometry g_;
};

KernelChoice plan_hardmax(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const SoftmaxGeometry g = softmax_geometry(node, inputs[0].info.shape);
  KernelChoice choice;
  choice.algorithm = "rows";
  choice.kernel = with_dtype(inputs[0].info.dtype, [&](auto t) -> std::unique_ptr<Kernel> {
    return std::make_unique<HardmaxKernel<decltype(t)>>(g);
  });
  return choice;
}

class HardmaxGradKernel final : public GradKernel {
 public:
  explicit HardmaxGradKernel(int64_t size) : size_(size) {}
  void run(const GradArgs& args) const override {
    float* dx = args.d_inputs[0];
    if (dx) std::fill(dx, dx + size_, 0.0f);
  }

 private:
  int64_t size_;  // x's element count
};

GradChoice plan_hardmax_grad(const GradRequest& r) {
  GradChoice choice;
  choice.algorithm = "zeros";
  choice.kernel = std::make_unique<HardmaxGradKernel>(numel(r.inputs[0].info.shape));
  return choice;
}

}  // namespace

void register_cpu_hardmax_kernels(KernelRegistry& r) { r.add("Hardmax", plan_hardmax).with_gradient(plan_hardmax_grad); }

}  // namespace dnnx
