// Size on the CPU: the element count is known when the plan is built (the input's shape is fixed
// by then): the kernel only writes it out.
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

class WriteCountKernel final : public Kernel {
 public:
  explicit WriteCountKernel(int64_t count) : count_(count) {}
  void run(const KernelArgs& args) const override { *args.out<int64_t>(0) = count_; }

 private:
  int64_t count_;
};

KernelChoice plan_size(const Node&, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  KernelChoice choice;
  choice.algorithm = "known at plan";
  choice.kernel = std::make_unique<WriteCountKernel>(numel(inputs[0].info.shape));
  return choice;
}

}  // namespace

void register_cpu_size_kernels(KernelRegistry& r) { r.add("Size", plan_size); }

}  // namespace dnnx
