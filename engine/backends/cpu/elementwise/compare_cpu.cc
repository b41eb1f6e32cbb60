// Equal, Less, Greater, LessOrEqual, GreaterOrEqual on the CPU (float32, float64, every integer
// type; Equal also bool and string; float16 and bfloat16 through float32, exact) -> bool, through the one broadcasting loop (broadcast_binary.h). NaN compares false.
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

// Strings compare by their bytes (Note [string tensors] in ir/tensor.h), as onnxruntime does.
struct StringsEqual {
  bool operator()(StringPtr a, StringPtr b) const { return string_of(a) == string_of(b); }
};

template <Compare Op>
KernelChoice compare_factory(const Node&, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  if constexpr (Op == Compare::Equal) {
    if (inputs[0].info.dtype == DType::String) {
      return broadcast_binary_choice<StringPtr, bool>(inputs, outputs, StringsEqual{});
    }
  }
  return with_number_or_bool(inputs[0].info.dtype, [&](auto t) {
    using T = decltype(t);
    return broadcast_binary_choice<T, bool>(inputs, outputs, Comparison<Op, T>{});
  });
}

}  // namespace

void register_cpu_compare_kernels(KernelRegistry& r) {
  std::vector<DType> equal_types = number_types();
  equal_types.push_back(DType::String);
  r.add("Equal", compare_factory<Compare::Equal>).with_dtypes(equal_types);
  r.add("Less", compare_factory<Compare::Less>).with_dtypes(number_types());
  r.add("Greater", compare_factory<Compare::Greater>).with_dtypes(number_types());
  r.add("LessOrEqual", compare_factory<Compare::LessOrEqual>).with_dtypes(number_types());
  r.add("GreaterOrEqual", compare_factory<Compare::GreaterOrEqual>).with_dtypes(number_types());
}

}  // namespace dnnx
