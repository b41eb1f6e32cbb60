// Transpose on CUDA, for any element size. As on the CPU, the permutation is simplified at plan
// time (size-1 dims dropped, dims that stay neighbours merged); what remains goes to the strided
// gather (gather_kernels.cu), which makes one contiguous range a device-to-device copy.
#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "ops/layout/transpose.h"

namespace dnnx::cuda {

namespace {

// The output dims, outermost first, with each one's element stride in the input.
BroadcastDims merge_dims(const Node& node, const Shape& in, const std::vector<int64_t>& perm) {
  std::vector<int64_t> in_strides(in.size(), 1);
  for (size_t d = in.size(); d-- > 1;) in_strides[d - 1] = in_strides[d] * in[d];
  std::vector<std::pair<int64_t, int64_t>> dims;  // (size, input stride)
  for (int64_t axis : perm) {
    if (in[axis] == 1) continue;
    // Mergeable when stepping the previous dim's innermost part jumps over exactly this one.
    if (!dims.empty() && dims.back().second == in[axis] * in_strides[axis]) {
      dims.back().first *= in[axis];
      dims.back().second = in_strides[axis];
    } else {
      dims.emplace_back(in[axis], in_strides[axis]);
    }
  }
  if (dims.size() > static_cast<size_t>(kMaxGlueDims)) {
    node_fail<UnsupportedModelError>(node, "permutation of " + shape_str(in) + " needs more than " +
                                               std::to_string(kMaxGlueDims) + " dims after merging");
  }
  BroadcastDims out;
  out.rank = static_cast<int>(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    out.size[d] = dims[d].first;
    out.stride_a[d] = dims[d].second;
  }
  return out;
}

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
  const BroadcastDims dims = merge_dims(node, x.shape, transpose_perm(node, x.shape.size()));
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
