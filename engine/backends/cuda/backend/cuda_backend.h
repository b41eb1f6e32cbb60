// The CUDA backend: cuDNN for Conv, MaxPool, activations and softmax, cuBLAS for Gemm and
// MatMul, small CUDA kernels for the glue ops. It lives in libdnnx_cuda.so, which the core
// opens only when a model asks for device="cuda" (runtime/device_library.h). One stream, one
// cuDNN and one cuBLAS handle per model; descriptors are built when a layer is planned.
#pragma once
#include <map>
#include <mutex>

#include "backends/cuda/runtime/array_pool.h"
#include "backends/cuda/backend/cuda_context.h"
#include "backends/cuda/runtime/nvtx_layers.h"
#include "runtime/backend.h"
#include "runtime/kernel_registry.h"

namespace dnnx::cuda {

class CudaBackend final : public Backend, public DeviceServices {
 public:
  // Opens the device and the libraries; DeviceError (no device, bad options) otherwise.
  explicit CudaBackend(const DeviceOptions& options);
  ~CudaBackend() override;  // makes the device current, so that its handles are destroyed on it

  std::string name() const override { return "cuda:" + std::to_string(context_->options.device); }
  std::string unsupported_reason(const Node& node) const override;
  const KernelRegistry& kernels() const override { return kernels_; }
  // Half storage where half_unsupported_reason is "" (Note [half storage]): Float16 for
  // precision="fp16", BFloat16 for "bf16", Float32 (none) otherwise.
  DType half_storage() const override;
  // "" when the node's registration stores half_storage()'s type, else why not (named).
  std::string half_unsupported_reason(const Node& node) const override;
  // tf32, fp16 and bf16: the window ops run channels-last (Note [channels last]).
  bool channels_last() const override;
  // tf32: 32 (Note [narrow regions]); fp16 and bf16: 0, every region (the fp32 direct kernels
  // are no candidates for half data, and cuDNN's NHWC half kernels win even on one input
  // channel).
  int64_t channels_last_min_channels() const override;
  int64_t channels_last_channel_multiple() const override;
  ChannelsLastForms channels_last_forms() const override;
  bool int8_channels_last() const override;  // Note [int8 nhwc on cuda]
  KernelChoice plan_node(const Node& node, const std::vector<ValueInfo>& inputs,
                         const std::vector<TensorInfo>& outputs) const override;
  // Note [device staged kernels]: the registration's staged kernel (NonZero, NonMaxSuppression),
  // or none with the reason (no registration, a type or form it refuses).
  StagedChoice plan_staged_node(const Node& node, const std::vector<ValueInfo>& inputs) const override;
  // Note [run-time fallback]: plan_node without the failed candidates, within workspace_cap.
  KernelChoice replan_node(const Node& node, const std::vector<ValueInfo>& inputs,
                           const std::vector<TensorInfo>& outputs, const std::vector<std::string>& failed,
                           size_t workspace_cap) const override;

  // Planning above; the device services (memory, copies, graphs, timers, streams) below.
  const DeviceServices* device() const override { return this; }
  void activate() const override;
  void* allocate(size_t bytes) const override;
  void release(void* ptr) const noexcept override;
  void copy_to_device(void* dst, const void* src, size_t bytes) const override;
  void copy_to_host(void* dst, const void* src, size_t bytes) const override;
  void synchronize() const override;
  bool capturing() const override;
  void set_priority(bool foreground) const override;
  // The device's memory, or memory_limit where that is less (Note [memory limit]).
  size_t total_memory() const override;
  std::string memory_name() const override;

  // Device runs: graphs, timers, stream joins and caller-owned arrays (cuda_backend_runs.cc).
  using DeviceServices::capture;
  std::unique_ptr<DeviceGraph> capture(const std::function<void()>& enqueue, GraphEdges edges) const override;
  std::unique_ptr<LayerTimer> layer_timer(size_t marks) const override;
  int device_index() const override { return context_->options.device; }
  int device_of(const void* ptr) const override;
  void copy_on_device(void* dst, const void* src, size_t bytes) const override;
  void wait_for_stream(uintptr_t stream) const override;
  uintptr_t import_stream() const override { return streams_->import_stream(); }
  void* allocate_array(size_t bytes) const override;
  void release_array(void* ptr, size_t bytes, const std::vector<uintptr_t>& readers) const noexcept override;
  void* allocate_pinned(size_t bytes) const override;
  void release_pinned(void* ptr) const noexcept override;
  void queue_copy_to_host(void* pinned, const void* src, size_t bytes) const override;
  void queue_host_call(const std::function<void()>* work) const override;
  PlannerReport planner_report() const override;
  void layers_planned() const override;
  // The loss, SGD and gradient kernels on this model's stream (training_cuda.cc).
  std::unique_ptr<TrainingOps> training_ops() const override;

  // The model's device, stream, handles and options (what gradient kernels plan against).
  const CudaContext& context() const { return *context_; }

 private:
  std::unique_ptr<CudaContext> context_;  // a fixed address: kernels point at it
  KernelRegistry kernels_;
  NvtxDomain nvtx_;                       // names every planned kernel (nvtx_layers.h)
  std::unique_ptr<StreamJoiner> streams_;  // made on the model's device, after context_
  std::unique_ptr<ArrayPool> arrays_;
  size_t total_memory_ = 0;  // cudaMemGetInfo's total, read once
  // The size of each allocation through allocate(), to give its bytes back to the budget on release.
  mutable std::mutex held_mutex_;
  mutable std::map<void*, size_t> held_;
  // Planning, once at a time: replan_node changes the context's options while it plans.
  mutable std::recursive_mutex plan_mutex_;
};

// Why `options` cannot be served ("" when they can; every precision is built now).
std::string unsupported_options(const DeviceOptions& options);

}  // namespace dnnx::cuda
