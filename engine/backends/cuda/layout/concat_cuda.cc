// Concat on CUDA, for any element size. Every input is viewed as [outer, chunk bytes] (outer:
// the product of the dims before `axis`); the output row o is input 0's row o, then input 1's,
// ...: one kernel places every input's rows (concat_kernels.cu).
//
// Note [concat in one launch]: one 2-D device-to-device copy (cudaMemcpy2DAsync) per input took
// DenseNet-121's concatenations to 599 copies a run, 4.0 ms of a 24.5 ms fp32 run at batch 64
// (H100, RESULTS_CUDA.md session 12): each layer concatenates every earlier feature map again. Now
// one kernel takes every input of a Concat of up to kMaxConcatInputs (blockIdx.y the input), in
// the widest unit (16, 4, 2 or 1 bytes) that divides every address, chunk and row; a Concat of
// more inputs keeps the copies. The bytes land where they did.
#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/layout/glue_kernels.h"
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
    if (chunks_.size() <= static_cast<size_t>(kMaxConcatInputs)) {  // Note [concat in one launch]
      ConcatInputs in;
      size_t column = 0;
      for (size_t i = 0; i < chunks_.size(); ++i) {
        if (chunks_[i] > 0) {
          in.data[in.count] = args.in<uint8_t>(i);
          in.chunk[in.count] = static_cast<int64_t>(chunks_[i]);
          in.column[in.count] = static_cast<int64_t>(column);
          ++in.count;
        }
        column += chunks_[i];
      }
      launch_concat(in, y, outer_, static_cast<int64_t>(row_bytes_), ctx_.stream);
      return;
    }
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
  choice.algorithm = layout.chunk_bytes.size() <= static_cast<size_t>(kMaxConcatInputs) ? "one kernel"
                                                                                     : "cudaMemcpy2DAsync per input";
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
