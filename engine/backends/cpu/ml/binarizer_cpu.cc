// Binarizer on the CPU (ops/ml/binarizer.cc has its semantics).
#include <cmath>

#include "ir/errors.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

class BinarizerKernel final : public Kernel {
 public:
  BinarizerKernel(std::string where, float threshold, int64_t n) : where_(std::move(where)), threshold_(threshold), n_(n) {}
  void run(const KernelArgs& args) const override {
    const float* x = args.in<float>(0);
    float* y = args.out<float>(0);
    for (int64_t i = 0; i < n_; ++i) {
      if (std::isnan(x[i])) throw InputError(where_ + ": X[" + std::to_string(i) + "] (flat index) is NaN");
      y[i] = x[i] > threshold_ ? 1.0f : 0.0f;
    }
  }

 private:
  std::string where_;
  float threshold_;
  int64_t n_;
};

KernelChoice plan_binarizer(const Node& node, const std::vector<ValueInfo>&, const std::vector<TensorInfo>& outputs) {
  KernelChoice choice;
  choice.algorithm = "threshold";
  choice.kernel = std::make_unique<BinarizerKernel>(node.where(), node.attr_float("threshold", 0.0f), numel(outputs[0].shape));
  return choice;
}

}  // namespace

void register_cpu_binarizer_kernels(KernelRegistry& r) { r.add("ai.onnx.ml::Binarizer", plan_binarizer); }

}  // namespace dnnx
