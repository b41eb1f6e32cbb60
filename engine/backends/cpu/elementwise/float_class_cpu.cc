// IsNaN and IsInf on the CPU: X float [..] -> bool [..], one type-generic loop each.
#include <cmath>
#include <type_traits>

#include "backends/cpu/runtime/element_type.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

// Which elements are NaN, or infinities of a detected sign.
struct FloatClass {
  bool nan = false;       // IsNaN
  bool positive = false;  // IsInf's detect_positive
  bool negative = false;  // IsInf's detect_negative
};

template <class T>
class FloatClassKernel final : public Kernel {
 public:
  FloatClassKernel(FloatClass c, int64_t n) : c_(c), n_(n) {}
  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    bool* y = args.out<bool>(0);
    for (int64_t i = 0; i < n_; ++i) {
      const T v = x[i];
      y[i] = c_.nan ? std::isnan(v) : std::isinf(v) && (v > T(0) ? c_.positive : c_.negative);
    }
  }

 private:
  FloatClass c_;
  int64_t n_;
};

KernelChoice plan_float_class(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  FloatClass c;
  c.nan = node.op_type == "IsNaN";
  c.positive = node.attr_int("detect_positive", 1) != 0;
  c.negative = node.attr_int("detect_negative", 1) != 0;
  KernelChoice choice;
  choice.algorithm = "elementwise";
  choice.kernel = with_dtype(inputs[0].info.dtype, [&](auto t) -> std::unique_ptr<Kernel> {
    using T = decltype(t);
    if constexpr (std::is_floating_point_v<T>) {
      return std::make_unique<FloatClassKernel<T>>(c, numel(inputs[0].info.shape));
    } else {
      node_fail<UnsupportedModelError>(node, std::string("input X must be a float type, got ") +
                                                 dtype_name(inputs[0].info.dtype));
    }
  });
  return choice;
}

}  // namespace

void register_cpu_float_class_kernels(KernelRegistry& r) {
  r.add("IsNaN", plan_float_class);
  r.add("IsInf", plan_float_class);
}

}  // namespace dnnx
