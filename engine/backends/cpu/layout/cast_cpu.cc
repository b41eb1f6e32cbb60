// Cast on the CPU between float32, int32, int64 and bool: static_cast per element (float -> int
// truncates toward zero, like onnxruntime; to bool is x != 0, NaN giving true; from bool 0 or 1);
// the same type is a plain copy.
#include <cstring>

#include "runtime/kernel_registry.h"
#include "backends/cpu/runtime/element_type.h"
#include "ops/layout/cast.h"

namespace dnnx {

namespace {

template <class From, class To>
class CastKernel final : public Kernel {
 public:
  explicit CastKernel(int64_t n) : n_(n) {}
  void run(const KernelArgs& args) const override {
    const From* x = args.in<From>(0);
    To* y = args.out<To>(0);
    if constexpr (std::is_same_v<From, To>) {
      std::memcpy(y, x, static_cast<size_t>(n_) * sizeof(To));
    } else {
      for (int64_t i = 0; i < n_; ++i) y[i] = static_cast<To>(x[i]);
    }
  }

 private:
  int64_t n_;
};

KernelChoice plan_cast(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  const DType from = inputs[0].info.dtype, to = cast_target(node);
  const int64_t n = numel(outputs[0].shape);
  KernelChoice choice;
  choice.algorithm = from == to ? "copy" : std::string(dtype_name(from)) + "->" + dtype_name(to);
  choice.kernel = with_dtype_or_bool(from, [&](auto f) {
    return with_dtype_or_bool(to, [&](auto t) -> std::unique_ptr<Kernel> {
      return std::make_unique<CastKernel<decltype(f), decltype(t)>>(n);
    });
  });
  return choice;
}

}  // namespace

void register_cpu_cast_kernels(KernelRegistry& r) { r.add("Cast", plan_cast); }

}  // namespace dnnx
