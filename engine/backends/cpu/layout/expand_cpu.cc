// Expand on the CPU, for any element size: runs of the output copy the input (memcpy) or
// repeat one input element (see broadcast_walk.h).
#include <algorithm>
#include <cstring>

#include "backends/cpu/elementwise/broadcast_walk.h"
#include "runtime/kernel_registry.h"
#include "backends/cpu/runtime/element_type.h"

namespace dnnx {

namespace {

template <class E>
class ExpandKernel final : public Kernel {
 public:
  explicit ExpandKernel(BroadcastWalk walk) : walk_(std::move(walk)) {}
  void run(const KernelArgs& args) const override {
    const E* x = args.in<E>(0);
    E* y = args.out<E>(0);
    for_each_run(walk_, [&](int64_t out, int64_t in, int64_t count, int64_t step) {
      if (step) {
        std::memcpy(y + out, x + in, static_cast<size_t>(count) * sizeof(E));
      } else {
        std::fill(y + out, y + out + count, x[in]);
      }
    });
  }

 private:
  BroadcastWalk walk_;
};

KernelChoice plan_expand(const Node&, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  KernelChoice choice;
  choice.algorithm = "broadcast copy";
  choice.kernel = make_for_element_size<ExpandKernel>(inputs[0].info.dtype,
                                                      broadcast_walk(inputs[0].info.shape, outputs[0].shape));
  return choice;
}

}  // namespace

void register_cpu_expand_kernels(KernelRegistry& r) { r.add("Expand", plan_expand).with_dtypes(movable_types()); }

}  // namespace dnnx
