// Note [multi-tensor update]: a step ends with the non-finite check of every gradient, then SGD
// on every parameter, and the check must finish for all of them before any update starts (a
// failed step leaves every parameter as it was). One launch per parameter and phase made
// LeNet's last:2 step (four parameters) queue eight small kernels; a CUDA graph still pays a
// node each. Here each phase is one launch over all parameters: at plan time every parameter is
// cut into chunks of at most kChunkElements, the table of chunks (pointers already offset,
// and the parameter's code) is uploaded once, and one block covers one chunk. The check keeps
// the first failing parameter in slot order whatever the blocks' order (record_first_code),
// so the error names the same parameter as the CPU's. SGD's arithmetic is the CPU's, element
// for element (training_kernels.cu), so the chunking changes no bit. The SGD launch's first
// block also writes the step's StepStats to the caller's page-locked report (Note [step io]).
// Note [lr staging]: the lr lives in page-locked host memory (set by the host before each
// replay). Read there by every SGD block (201 for LeNet's last:2), the reads crossed the bus
// one after another: the H200 measured SGD at 14-22 us for 8 MB of traffic. The check's first
// block now copies it once into device memory, where SGD reads it.
#include "backends/cuda/train/param_update_cuda.h"

#include <algorithm>

#include "backends/cuda/runtime/cuda_handles.h"
#include "backends/cuda/train/training_kernels.h"

namespace dnnx::cuda {

namespace {

class CudaParamUpdate final : public ParamUpdate {
 public:
  CudaParamUpdate(const CudaContext& ctx, const SgdOptions& options, const std::vector<ParamSlot>& params)
      : ctx_(ctx), options_(options) {
    std::vector<UpdateChunk> chunks;
    for (size_t i = 0; i < params.size(); ++i) {
      const ParamSlot& p = params[i];
      for (int64_t begin = 0; begin < p.n; begin += kChunkElements) {
        UpdateChunk c;
        c.w = p.w + begin;
        c.grad = p.grad + begin;
        c.velocity = p.velocity ? p.velocity + begin : nullptr;
        c.n = static_cast<int32_t>(std::min<int64_t>(kChunkElements, p.n - begin));
        c.code = kFirstGradientCode + static_cast<int32_t>(i);
        chunks.push_back(c);
      }
    }
    count_ = static_cast<int64_t>(chunks.size());
    lr_ = device_alloc(ctx_, sizeof(float), "cudaMalloc (the update's lr)");
    const size_t bytes = chunks.size() * sizeof(UpdateChunk);
    table_ = device_alloc(ctx_, bytes, "cudaMalloc (the update's chunk table)");
    if (bytes > 0) {
      check(cudaMemcpy(table_.get(), chunks.data(), bytes, cudaMemcpyHostToDevice),
            "cudaMemcpy (the update's chunk table)");
    }
  }

  void check_finite(const float* lr, StepStats* stats) const override {
    launch_check_finite(chunks(), count_, lr, device_lr(), stats, ctx_.stream);
  }

  // `lr` was staged by check_finite (ParamUpdate's contract: the same pointer, just before).
  void sgd(const float* /*lr*/, const StepStats* stats, StepStats* report) const override {
    launch_sgd(chunks(), count_, options_, device_lr(), stats, report, ctx_.stream);
  }

 private:
  const UpdateChunk* chunks() const { return static_cast<const UpdateChunk*>(table_.get()); }
  float* device_lr() const { return static_cast<float*>(lr_.get()); }

  const CudaContext& ctx_;
  SgdOptions options_;
  DeviceMemory table_;  // count_ UpdateChunks
  DeviceMemory lr_;     // one float: Note [lr staging]
  int64_t count_ = 0;
};

}  // namespace

std::unique_ptr<ParamUpdate> make_cuda_param_update(const CudaContext& ctx, const SgdOptions& options,
                                                    const std::vector<ParamSlot>& params) {
  return std::make_unique<CudaParamUpdate>(ctx, options, params);
}

}  // namespace dnnx::cuda
