// CUDA's training ops (runtime/training.h, Note [training ops]) besides the gradient kernels
// (registered with their forward kernels): the loss kernel of training_kernels.cu and the multi-tensor check and
// SGD of param_update_cuda.cc, all queued on the model's stream, so that a whole step can be
// recorded as one CUDA graph.
#include "backends/cuda/backend/cuda_backend.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/train/param_update_cuda.h"
#include "backends/cuda/train/training_kernels.h"

namespace dnnx::cuda {

namespace {

class CudaTrainingOps final : public TrainingOps {
 public:
  explicit CudaTrainingOps(const CudaContext& ctx)
      : ctx_(ctx),
        scratch_memory_(device_alloc(ctx, kLossScratchBlocks * sizeof(double) + sizeof(unsigned long long),
                                     "cudaMalloc (loss scratch)")) {
    scratch_.partial = static_cast<double*>(scratch_memory_.get());
    scratch_.right = reinterpret_cast<unsigned long long*>(scratch_.partial + kLossScratchBlocks);
  }


  void loss(const LossCall& call, StepStats* stats) const override { launch_loss(call, stats, scratch_, ctx_.stream); }

  std::unique_ptr<ParamUpdate> plan_update(const SgdOptions& options,
                                           const std::vector<ParamSlot>& params) const override {
    return make_cuda_param_update(ctx_, options, params);
  }

  void accumulate(float* dst, const float* src, int64_t n) const override {
    launch_accumulate(dst, src, n, ctx_.stream);
  }

  // Portable: the pages stay locked for every device, whichever is current. Mapped: kernels
  // read and write them at the same address (unified addressing, every 64-bit platform CUDA
  // supports).
  void* allocate_host(size_t bytes) const override {
    if (bytes == 0) return nullptr;
    void* ptr = nullptr;
    check(cudaHostAlloc(&ptr, bytes, cudaHostAllocPortable | cudaHostAllocMapped), "cudaHostAlloc");
    return ptr;
  }

  void release_host(void* ptr) const noexcept override {
    if (ptr) cudaFreeHost(ptr);
  }

  void copy_to_pinned(void* host, const void* src, size_t bytes) const override {
    if (bytes == 0) return;
    check(cudaMemcpyAsync(host, src, bytes, cudaMemcpyDeviceToHost, ctx_.stream), "cudaMemcpyAsync (to pinned)");
  }

 private:
  const CudaContext& ctx_;
  DeviceMemory scratch_memory_;  // the loss's reduction scratch (one step at a time: stream order)
  LossScratch scratch_;
};

}  // namespace

std::unique_ptr<TrainingOps> CudaBackend::training_ops() const {
  return std::make_unique<CudaTrainingOps>(*context_);
}

}  // namespace dnnx::cuda
