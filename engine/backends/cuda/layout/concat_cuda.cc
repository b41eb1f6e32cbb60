// Concat on CUDA, for any element size. Every input is viewed as [outer, chunk bytes] (outer:
// the product of the dims before `axis`); the output row o is input 0's row o, then input 1's,
// ...: one 2-D device-to-device copy (cudaMemcpy2DAsync) per input places all its rows.
#include "backends/cuda/backend/cuda_kernels.h"
#include "ops/layout/concat.h"

namespace dnnx::cuda {

namespace {

class ConcatKernel final : public Kernel {
 public:
  // chunks: the bytes of one outer row of every input, in input order.
  ConcatKernel(const CudaContext& ctx, int64_t outer, std::vector<size_t> chunks)
      : ctx_(ctx), outer_(outer), chunks_(std::move(chunks)) {
    for (size_t c : chunks_) row_bytes_ += c;
  }

  void run(const KernelArgs& args) const override {
    uint8_t* y = args.out<uint8_t>(0);
    size_t column = 0;  // where input i starts within an output row
    for (size_t i = 0; i < chunks_.size(); ++i) {
      const size_t chunk = chunks_[i];
      if (chunk == 0 || outer_ == 0) continue;
      check(cudaMemcpy2DAsync(y + column, row_bytes_, args.in<uint8_t>(i), chunk, chunk, static_cast<size_t>(outer_),
                              cudaMemcpyDeviceToDevice, ctx_.stream),
            "cudaMemcpy2DAsync");
      column += chunk;
    }
  }

 private:
  const CudaContext& ctx_;
  int64_t outer_;
  std::vector<size_t> chunks_;
  size_t row_bytes_ = 0;
};

KernelChoice concat_factory(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs) {
  ConcatLayout layout = concat_layout(node, inputs);
  KernelChoice choice;
  choice.algorithm = "cudaMemcpy2DAsync per input";
  choice.kernel = std::make_unique<ConcatKernel>(ctx, layout.outer, std::move(layout.chunk_bytes));
  return choice;
}

}  // namespace

void register_cuda_concat_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Concat", [&ctx](const Node& node, const std::vector<ValueInfo>& inputs,
                         const std::vector<TensorInfo>&) { return concat_factory(ctx, node, inputs); })
      .with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda
