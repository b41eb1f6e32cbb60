// The gradients of the layout ops on CUDA, as on the CPU (transpose_grad_cpu.cc,
// concat_grad_cpu.cc):
//   Transpose  dX = Transpose(dY, inverse perm): train/transpose_grad.h, with the CUDA Transpose
//              kernel planned for the inverse permutation
//   Concat     dX_i = input i's slice of dY, viewed as [outer, chunk] rows (ops/layout/concat.h's
//              layout, as the forward kernel): one 2-D device copy (cudaMemcpy2DAsync) per input
#include "backends/cuda/backend/cuda_kernels.h"
#include "ops/layout/concat.h"
#include "train/transpose_grad.h"

namespace dnnx::cuda {

namespace {

class ConcatGradKernel final : public GradKernel {
 public:
  // chunks: the bytes of one outer row of every input, in input order.
  ConcatGradKernel(const CudaContext& ctx, int64_t outer, std::vector<size_t> chunks)
      : ctx_(ctx), outer_(outer), chunks_(std::move(chunks)) {
    for (size_t c : chunks_) row_bytes_ += c;
  }

  void run(const GradArgs& args) const override {
    const auto* dy = reinterpret_cast<const uint8_t*>(args.d_outputs[0]);
    size_t column = 0;  // where input i starts within a row of dY
    for (size_t i = 0; i < chunks_.size(); column += chunks_[i], ++i) {
      const size_t chunk = chunks_[i];
      if (!args.d_inputs[i] || chunk == 0 || outer_ == 0) continue;
      check(cudaMemcpy2DAsync(args.d_inputs[i], chunk, dy + column, row_bytes_, chunk, static_cast<size_t>(outer_),
                              cudaMemcpyDeviceToDevice, ctx_.stream),
            "cudaMemcpy2DAsync");
    }
  }

 private:
  const CudaContext& ctx_;
  int64_t outer_;
  std::vector<size_t> chunks_;
  size_t row_bytes_ = 0;
};

GradChoice plan_concat_grad(const GradRequest& r) {
  ConcatLayout layout = concat_layout(r.node, r.inputs);
  GradChoice choice;
  choice.algorithm = "cudaMemcpy2DAsync per input";
  choice.kernel = std::make_unique<ConcatGradKernel>(cuda_context_of(r), layout.outer, std::move(layout.chunk_bytes));
  return choice;
}

}  // namespace

void register_cuda_layout_grad_kernels(KernelRegistry& r, const CudaContext&) {
  r.at("Transpose").with_gradient(plan_transpose_grad);
  r.at("Concat").with_gradient(plan_concat_grad);
}

}  // namespace dnnx::cuda
