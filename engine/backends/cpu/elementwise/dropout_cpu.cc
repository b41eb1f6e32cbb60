// Dropout's mask at inference on the CPU: output 0 is a view of X (ops/shape/view.cc), and this
// kernel, run beside the view (Note [views with more outputs] in runtime/planner.cc), writes
// only the mask: all true (bool, opset 10 on), or all ones of X's type before.
#include <algorithm>

#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

constexpr size_t kMask = 1;

class DropoutMaskKernel final : public Kernel {
 public:
  DropoutMaskKernel(DType dtype, int64_t n) : dtype_(dtype), n_(n) {}
  void run(const KernelArgs& args) const override {
    if (dtype_ == DType::Bool) {
      std::fill(args.out<uint8_t>(kMask), args.out<uint8_t>(kMask) + n_, uint8_t{1});
    } else {
      std::fill(args.out(kMask), args.out(kMask) + n_, 1.0f);
    }
  }

 private:
  DType dtype_;
  int64_t n_;
};

KernelChoice plan_dropout(const Node& node, const std::vector<ValueInfo>&, const std::vector<TensorInfo>& outputs) {
  if (!node.has_output(kMask)) node_fail<UnsupportedModelError>(node, "a Dropout without a mask is a view: no kernel");
  KernelChoice choice;
  choice.algorithm = "mask fill (all kept)";
  choice.kernel = std::make_unique<DropoutMaskKernel>(outputs[kMask].dtype, numel(outputs[kMask].shape));
  return choice;
}

}  // namespace

void register_cpu_dropout_kernels(KernelRegistry& r) { r.add("Dropout", plan_dropout); }

}  // namespace dnnx
