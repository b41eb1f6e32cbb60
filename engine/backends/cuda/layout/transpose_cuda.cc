// Transpose on CUDA, for any element size. As on the CPU, the permutation is simplified at plan
// time (size-1 dims dropped, dims that stay neighbours merged: gather_dims.h); what remains goes to
// the strided gather (gather_kernels.cu), which makes one contiguous range a device-to-device copy.
#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/layout/gather_dims.h"
#include "ops/layout/transpose.h"

namespace dnnx::cuda {

namespace {

class TransposeKernel final : public Kernel {
 public:
  TransposeKernel(const CudaContext& ctx, size_t elem, int64_t n, BroadcastDims dims)
      : ctx_(ctx), elem_(elem), n_(n), dims_(dims) {}

  // A "copy" (dims that merge to one contiguous range) is a cudaMemcpyAsync inside launch_gather
  // (Note [gathers by wide units]).
  void run(const KernelArgs& args) const override {
    launch_gather(args.in<void>(0), args.out<void>(0), elem_, n_, dims_, ctx_.stream);
  }

 private:
  const CudaContext& ctx_;
  size_t elem_;
  int64_t n_;
  BroadcastDims dims_;
};

KernelChoice transpose_factory(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = inputs[0].info;
  const BroadcastDims dims = transpose_gather_dims(node, x.shape, transpose_perm(node, x.shape.size()));
  KernelChoice choice;
  choice.algorithm = dims.rank <= 1 ? "copy" : "gather kernel";
  choice.kernel = std::make_unique<TransposeKernel>(ctx, dtype_size(x.dtype), numel(x.shape), dims);
  return choice;
}

}  // namespace

void register_cuda_transpose_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Transpose", [&ctx](const Node& node, const std::vector<ValueInfo>& inputs,
                            const std::vector<TensorInfo>&) { return transpose_factory(ctx, node, inputs); })
      .with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda
