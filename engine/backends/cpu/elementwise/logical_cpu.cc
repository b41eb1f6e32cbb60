// Not, And, Or, Xor on the CPU, on bool (one byte, 0 or 1); the binary ones through the one
// broadcasting loop (broadcast_binary.h).
#include "backends/cpu/elementwise/broadcast_binary.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

// Bool only: no float types stored (KernelEntry::dtypes empty; the support matrix says "none").

namespace {

class NotKernel final : public Kernel {
 public:
  explicit NotKernel(int64_t n) : n_(n) {}
  void run(const KernelArgs& args) const override {
    const bool* x = args.in<bool>(0);
    bool* y = args.out<bool>(0);
    for (int64_t i = 0; i < n_; ++i) y[i] = !x[i];
  }

 private:
  int64_t n_;
};

KernelChoice plan_not(const Node&, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  KernelChoice choice;
  choice.algorithm = "elementwise";
  choice.kernel = std::make_unique<NotKernel>(numel(inputs[0].info.shape));
  return choice;
}

enum class Logic { And, Or, Xor };

template <Logic Op>
struct Logical {
  bool operator()(bool a, bool b) const {
    if constexpr (Op == Logic::And) return a && b;
    if constexpr (Op == Logic::Or) return a || b;
    if constexpr (Op == Logic::Xor) return a != b;
  }
};

template <Logic Op>
KernelChoice logical_factory(const Node&, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  return broadcast_binary_choice<bool, bool>(inputs, outputs, Logical<Op>{});
}

}  // namespace

void register_cpu_logical_kernels(KernelRegistry& r) {
  r.add("Not", plan_not).with_dtypes({});
  r.add("And", logical_factory<Logic::And>).with_dtypes({});
  r.add("Or", logical_factory<Logic::Or>).with_dtypes({});
  r.add("Xor", logical_factory<Logic::Xor>).with_dtypes({});
}

}  // namespace dnnx
