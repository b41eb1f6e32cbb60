// Range on the CPU: y[i] = start + i * delta for i < n, n fixed by the plan (ops/shape/range.h), start
// and delta read from the inputs as the kernel runs.
#include "backends/cpu/runtime/element_type.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

template <class T>
class RangeKernel final : public Kernel {
 public:
  explicit RangeKernel(int64_t n) : n_(n) {}
  void run(const KernelArgs& args) const override {
    const T start = *args.in<T>(0), delta = *args.in<T>(2);
    T* y = args.out<T>(0);
    for (int64_t i = 0; i < n_; ++i) y[i] = static_cast<T>(start + static_cast<T>(i) * delta);
  }

 private:
  int64_t n_;
};

KernelChoice plan_range(const Node&, const std::vector<ValueInfo>&, const std::vector<TensorInfo>& outputs) {
  KernelChoice choice;
  choice.algorithm = "fill";
  choice.kernel = with_number(outputs[0].dtype, [&](auto t) -> std::unique_ptr<Kernel> {
    return std::make_unique<RangeKernel<decltype(t)>>(numel(outputs[0].shape));
  });
  return choice;
}

}  // namespace

void register_cpu_range_kernels(KernelRegistry& r) { r.add("Range", plan_range).with_dtypes(number_types()); }

}  // namespace dnnx
