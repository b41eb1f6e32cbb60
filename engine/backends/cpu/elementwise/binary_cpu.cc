// Add, Sub, Mul, Div, Mod on the CPU, on float32, int32 and int64, through the one broadcasting
// loop (broadcast_binary.h). Integer Div truncates toward zero and Mod follows its fmod
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
    if constexpr (Op == BinaryOp::Add) return a + b;
    if constexpr (Op == BinaryOp::Sub) return a - b;
    if constexpr (Op == BinaryOp::Mul) return a * b;
    if constexpr (Op == BinaryOp::Div) {
      if constexpr (std::is_integral_v<T>) return int_div(a, b);
      return a / b;
    }
    if constexpr (Op == BinaryOp::Mod) {
      if constexpr (std::is_integral_v<T>) return int_mod(a, b, mod);
      return float_mod(a, b, mod);
    }
  }
};

template <BinaryOp Op>
KernelChoice binary_factory(const Node& node, const std::vector<ValueInfo>& inputs,
                            const std::vector<TensorInfo>& outputs) {
  const ModKind mod = Op == BinaryOp::Mod ? mod_kind(node) : ModKind::Fmod;
  return with_dtype(outputs[0].dtype, [&](auto t) {
    using T = decltype(t);
    return broadcast_binary_choice<T, T>(inputs, outputs, Arith<Op, T>{mod});
  });
}

}  // namespace

void register_cpu_binary_kernels(KernelRegistry& r) {
  r.add("Add", binary_factory<BinaryOp::Add>);
  r.add("Sub", binary_factory<BinaryOp::Sub>);
  r.add("Mul", binary_factory<BinaryOp::Mul>);
  r.add("Div", binary_factory<BinaryOp::Div>);
  r.add("Mod", binary_factory<BinaryOp::Mod>);
}

}  // namespace dnnx
