// The CPU backend: OpenBLAS for every GEMM, plain loops for the rest (NCHW, float32).
#pragma once
#include "runtime/backend.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

class CpuBackend final : public Backend {
 public:
  CpuBackend();
  std::string name() const override { return "cpu"; }
  std::string unsupported_reason(const Node& node) const override;
  const KernelRegistry& kernels() const override { return kernels_; }
  KernelChoice plan_node(const Node& node, const std::vector<ValueInfo>& inputs,
                         const std::vector<TensorInfo>& outputs) const override;
  // The host loss and SGD of engine/train and the CPU gradient kernels (training_cpu.cc).
  std::unique_ptr<TrainingOps> training_ops() const override;

 private:
  KernelRegistry kernels_;
};

// The explicit list of CPU kernel files (backends/cpu/cpu_kernel_list.cc).
void register_cpu_kernels(KernelRegistry& registry);

}  // namespace dnnx
