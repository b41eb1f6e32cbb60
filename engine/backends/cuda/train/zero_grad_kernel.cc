#include "backends/cuda/train/zero_grad_kernel.h"

#include <memory>
#include <utility>
#include <vector>

#include "backends/cuda/runtime/cuda_check.h"

namespace dnnx::cuda {

namespace {

class ZeroGradKernel final : public GradKernel {
 public:
  ZeroGradKernel(const CudaContext& ctx, std::vector<size_t> bytes) : ctx_(ctx), bytes_(std::move(bytes)) {}
  void run(const GradArgs& args) const override {
    for (size_t i = 0; i < bytes_.size(); ++i) {
      if (args.d_inputs[i] && bytes_[i]) {
        check(cudaMemsetAsync(args.d_inputs[i], 0, bytes_[i], ctx_.stream), "cudaMemsetAsync");
      }
    }
  }

 private:
  const CudaContext& ctx_;
  std::vector<size_t> bytes_;  // per input: its bytes, 0 when absent
};

}  // namespace

GradChoice zero_grad_choice(const CudaContext& ctx, const GradRequest& r, std::string algorithm) {
  std::vector<size_t> bytes;
  for (const ValueInfo& in : r.inputs) bytes.push_back(in.present ? in.info.bytes() : 0);
  GradChoice choice;
  choice.algorithm = std::move(algorithm);
  choice.kernel = std::make_unique<ZeroGradKernel>(ctx, std::move(bytes));
  return choice;
}

}  // namespace dnnx::cuda
