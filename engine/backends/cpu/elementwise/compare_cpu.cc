// Equal, Less, Greater, LessOrEqual, GreaterOrEqual on the CPU (float32, int32, int64; Equal also
// bool) -> bool, through the one broadcasting loop (broadcast_binary.h). NaN compares false.
#include "backends/cpu/elementwise/broadcast_binary.h"
#include "backends/cpu/runtime/element_type.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

enum class Compare { Equal, Less, Greater, LessOrEqual, GreaterOrEqual };

template <Compare Op, class T>
struct Comparison {
  bool operator()(T a, T b) const {
    if constexpr (Op == Compare::Equal) return a == b;
    if constexpr (Op == Compare::Less) return a < b;
    if constexpr (Op == Compare::Greater) return a > b;
    if constexpr (Op == Compare::LessOrEqual) return a <= b;
    if constexpr (Op == Compare::GreaterOrEqual) return a >= b;
  }
};

template <Compare Op>
KernelChoice compare_factory(const Node&, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  return with_dtype_or_bool(inputs[0].info.dtype, [&](auto t) {
    using T = decltype(t);
    return broadcast_binary_choice<T, bool>(inputs, outputs, Comparison<Op, T>{});
  });
}

}  // namespace

void register_cpu_compare_kernels(KernelRegistry& r) {
  r.add("Equal", compare_factory<Compare::Equal>);
  r.add("Less", compare_factory<Compare::Less>);
  r.add("Greater", compare_factory<Compare::Greater>);
  r.add("LessOrEqual", compare_factory<Compare::LessOrEqual>);
  r.add("GreaterOrEqual", compare_factory<Compare::GreaterOrEqual>);
}

}  // namespace dnnx
