// MaxUnpool on the CPU (ops/pool/max_unpool.cc): Y zeroed, then Y[I[i]] = X[i].
#include <algorithm>

#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

template <class T>
class MaxUnpoolKernel final : public Kernel {
 public:
  MaxUnpoolKernel(int64_t in_size, int64_t out_size, std::string where)
      : in_size_(in_size), out_size_(out_size), where_(std::move(where)) {}

  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    const int64_t* indices = args.in<int64_t>(1);
    T* y = args.out<T>(0);
    std::fill(y, y + out_size_, T(0));
    for (int64_t i = 0; i < in_size_; ++i) {
      if (indices[i] < 0 || indices[i] >= out_size_) {
        throw InputError(where_ + ": I[" + std::to_string(i) + "] = " + std::to_string(indices[i]) +
                         " is outside the output's " + std::to_string(out_size_) + " elements");
      }
      y[indices[i]] = x[i];
    }
  }

 private:
  int64_t in_size_, out_size_;
  std::string where_;
};

KernelChoice plan_max_unpool(const Node& node, const std::vector<ValueInfo>& inputs,
                             const std::vector<TensorInfo>& outputs) {
  KernelChoice choice;
  choice.algorithm = "scatter";
  choice.kernel = std::make_unique<MaxUnpoolKernel<float>>(numel(inputs[0].info.shape), numel(outputs[0].shape),
                                                           node.where());
  return choice;
}

}  // namespace

void register_cpu_max_unpool_kernels(KernelRegistry& r) { r.add("MaxUnpool", plan_max_unpool); }

}  // namespace dnnx
