// Add, Sub, Mul, Div, Mod on the CPU, on float32, float64 and every integer type (float16 and
// bfloat16 through float32: Note [cpu dtypes]), through the one broadcasting loop
// (broadcast_binary.h). Integer Add, Sub and Mul wrap (computed in uint64_t: no C++ overflow, the
// two's complement result onnxruntime gives). Integer Div truncates toward zero and Mod follows its fmod
// attribute (ops/elementwise/div_mod.h: as onnxruntime; a division by zero gives 0 rather than a crash);
// float Mod is fmod (fmod=1) or numpy.mod (fmod=0, as the newest opsets define it).
#include <type_traits>

#include "backends/cpu/elementwise/broadcast_binary.h"
#include "backends/cpu/runtime/element_type.h"
#include "ops/elementwise/binary.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

enum class BinaryOp { Add, Sub, Mul, Div, Mod };

template <BinaryOp Op, class T>
struct Arith {
  ModKind mod = ModKind::Fmod;
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T> && Op != BinaryOp::Div && Op != BinaryOp::Mod) {
      const uint64_t x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
      if constexpr (Op == BinaryOp::Add) return static_cast<T>(x + y);
      if constexpr (Op == BinaryOp::Sub) return static_cast<T>(x - y);
      if constexpr (Op == BinaryOp::Mul) return static_cast<T>(x * y);
    } else {
      if constexpr (Op == BinaryOp::Add) return a + b;
      if constexpr (Op == BinaryOp::Sub) return a - b;
      if constexpr (Op == BinaryOp::Mul) return a * b;
    }
    if constexpr (Op == BinaryOp::Div) {
      if constexpr (std::is_integral_v<T>) return int_div(a, b);
      else return a / b;
    }
    if constexpr (Op == BinaryOp::Mod) {
      if constexpr (std::is_integral_v<T>) return int_mod(a, b, mod);
      else return float_mod(a, b, mod);
    }
  }
};

template <BinaryOp Op>
KernelChoice binary_factory(const Node& node, const std::vector<ValueInfo>& inputs,
                            const std::vector<TensorInfo>& outputs) {
  const ModKind mod = Op == BinaryOp::Mod ? mod_kind(node) : ModKind::Fmod;
  return with_number(outputs[0].dtype, [&](auto t) {
    using T = decltype(t);
    return broadcast_binary_choice<T, T>(inputs, outputs, Arith<Op, T>{mod});
  });
}

}  // namespace

void register_cpu_binary_kernels(KernelRegistry& r) {
  r.add("Add", binary_factory<BinaryOp::Add>).with_dtypes(number_types());
  r.add("Sub", binary_factory<BinaryOp::Sub>).with_dtypes(number_types());
  r.add("Mul", binary_factory<BinaryOp::Mul>).with_dtypes(number_types());
  r.add("Div", binary_factory<BinaryOp::Div>).with_dtypes(number_types());
  r.add("Mod", binary_factory<BinaryOp::Mod>).with_dtypes(number_types());
}

}  // namespace dnnx
