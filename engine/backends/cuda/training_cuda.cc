// CUDA's training ops (core/training.h, Note [training ops]): the gradient kernels of
// cuda_grad_kernels.cc and the loss, check and SGD kernels of training_kernels.cu, all queued
// on the model's stream, so that a whole step can be recorded as one CUDA graph.
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cuda_grad_kernels.h"
#include "backends/cuda/training_kernels.h"

namespace dnnx::cuda {

namespace {

class CudaTrainingOps final : public TrainingOps {
 public:
  explicit CudaTrainingOps(const CudaContext& ctx)
      : ctx_(ctx),
        scratch_memory_(device_alloc(kLossScratchBlocks * sizeof(double) + sizeof(unsigned long long),
                                     "cudaMalloc (loss scratch)")) {
    scratch_.partial = static_cast<double*>(scratch_memory_.get());
    scratch_.right = reinterpret_cast<unsigned long long*>(scratch_.partial + kLossScratchBlocks);
  }

  void register_grad_kernels(GradRegistry& registry) const override { register_cuda_grad_kernels(registry); }

  void loss(const LossCall& call, StepStats* stats) const override { launch_loss(call, stats, scratch_, ctx_.stream); }

  void check_finite(const float* x, int64_t n, int32_t code, StepStats* stats) const override {
    launch_check_finite(x, n, code, stats, ctx_.stream);
  }

  void sgd_update(const SgdOptions& options, const float* lr, float* w, const float* grad, float* velocity,
                  int64_t n, const StepStats* stats) const override {
    launch_sgd(options, lr, w, grad, velocity, n, stats, ctx_.stream);
  }

  void accumulate(float* dst, const float* src, int64_t n) const override {
    launch_accumulate(dst, src, n, ctx_.stream);
  }

  // Portable: the pages stay locked for every device, whichever is current.
  void* allocate_host(size_t bytes) const override {
    if (bytes == 0) return nullptr;
    void* ptr = nullptr;
    check(cudaHostAlloc(&ptr, bytes, cudaHostAllocPortable), "cudaHostAlloc");
    return ptr;
  }

  void release_host(void* ptr) const noexcept override {
    if (ptr) cudaFreeHost(ptr);
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
