// GlobalAveragePool, GlobalMaxPool on the CPU: x [N*C planes, S] -> y [N*C], one pass per plane.
// Their gradients are ReduceMean's and ReduceMax's over the spatial dims (reduce/reduce_cpu.cc):
// dY / S to every element of the plane; dY to the plane's maximum, split evenly between equal
// maxima (PyTorch's amax rule; MaxPool's gradient gives it to the first).
#include <algorithm>
#include <limits>

#include "backends/cpu/reduce/reduce_grad_cpu.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

enum class GlobalPool { Average, Max };

class GlobalPoolKernel final : public Kernel {
 public:
  GlobalPoolKernel(GlobalPool kind, int64_t planes, int64_t plane)
      : kind_(kind), planes_(planes), plane_(plane) {}

  void run(const KernelArgs& args) const override {
    const float* x = args.in(0);
    float* y = args.out(0);
    for (int64_t p = 0; p < planes_; ++p, x += plane_) {
      if (kind_ == GlobalPool::Max) {
        // An empty plane (a 0 spatial dim) reads nothing: the lowest float, as onnxruntime's pools
        // start their maximum (the average's 0 / 0 is NaN below).
        y[p] = plane_ ? *std::max_element(x, x + plane_) : std::numeric_limits<float>::lowest();
        continue;
      }
      float sum = 0.0f;
      for (int64_t i = 0; i < plane_; ++i) sum += x[i];
      y[p] = sum / static_cast<float>(plane_);
    }
  }

 private:
  GlobalPool kind_;
  int64_t planes_, plane_;
};

KernelFactory global_pool_factory(GlobalPool kind) {
  return [kind](const Node&, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
    const Shape& x = inputs[0].info.shape;
    const int64_t planes = x[0] * x[1];
    KernelChoice choice;
    choice.algorithm = "plane reduction";
    choice.kernel = std::make_unique<GlobalPoolKernel>(kind, planes, planes ? numel(x) / planes : 0);
    return choice;
  };
}

GradFactory global_pool_grad(ReduceKind kind) {
  return [kind](const GradRequest& r) {
    const Shape& x = r.inputs[0].info.shape;
    return plan_reduction_grad(kind, x, spatial_dims(x.size()));
  };
}

}  // namespace

void register_cpu_global_pool_kernels(KernelRegistry& r) {
  r.add("GlobalAveragePool", global_pool_factory(GlobalPool::Average)).with_gradient(global_pool_grad(ReduceKind::Mean));
  r.add("GlobalMaxPool", global_pool_factory(GlobalPool::Max)).with_gradient(global_pool_grad(ReduceKind::Max));
}

}  // namespace dnnx
