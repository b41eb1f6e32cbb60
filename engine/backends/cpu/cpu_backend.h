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
  // Note [channels-last conv on the cpu] (conv/conv_nhwc_cpu.cc): on a CPU with AVX-512 or AVX2
  // (or with DNNX_CONV_NHWC=portable or =avx2) the 2-D convs and pools run on [N, H, W, C] data, unless
  // DNNX_CONV_NHWC=off.
  bool channels_last() const override;
  int64_t channels_last_min_channels() const override;
  ChannelsLastForms channels_last_forms() const override;
  // The host loss and SGD of engine/train and the CPU gradient kernels (training_cpu.cc).
  std::unique_ptr<TrainingOps> training_ops() const override;

 private:
  KernelRegistry kernels_;
};

// The explicit list of CPU kernel files (backends/cpu/cpu_kernel_list.cc).
void register_cpu_kernels(KernelRegistry& registry);

}  // namespace dnnx
