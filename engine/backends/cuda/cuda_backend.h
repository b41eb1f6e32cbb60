// The CUDA backend: cuDNN for Conv, MaxPool, activations and softmax, cuBLAS for Gemm and
// MatMul, small CUDA kernels for the glue ops. It lives in libdnnx_cuda.so, which the core
// opens only when a model asks for device="cuda" (core/device_library.h). One stream, one
// cuDNN and one cuBLAS handle per model; descriptors are built when a layer is planned.
#pragma once
#include "backends/cuda/cuda_context.h"
#include "core/backend.h"

namespace dnnx::cuda {

class CudaBackend final : public Backend {
 public:
  // Opens the device and the libraries; DeviceError (no device, bad options) otherwise.
  explicit CudaBackend(const DeviceOptions& options);
  ~CudaBackend() override;  // makes the device current, so that its handles are destroyed on it

  std::string name() const override { return "cuda:" + std::to_string(context_->options.device); }
  std::string unsupported_reason(const Node& node) const override;
  KernelChoice plan_node(const Node& node, const std::vector<ValueInfo>& inputs,
                         const std::vector<TensorInfo>& outputs) const override;

  bool uses_host_memory() const override { return false; }
  void activate() const override;
  void* allocate(size_t bytes) const override;
  void release(void* ptr) const noexcept override;
  void copy_to_device(void* dst, const void* src, size_t bytes) const override;
  void copy_to_host(void* dst, const void* src, size_t bytes) const override;
  void synchronize() const override;
  PlannerReport planner_report() const override;

 private:
  std::unique_ptr<CudaContext> context_;  // a fixed address: kernels point at it
  KernelRegistry kernels_;
};

// Why `options` cannot be served ("" when they can): the precision not built yet (fp16).
std::string unsupported_options(const DeviceOptions& options);

}  // namespace dnnx::cuda
