// Expand on CUDA, one of the real-world ops of issue #5: the strided gather (gather_kernels.cu)
// with stride 0 along the broadcast dims (gather_dims.h), any element type.
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/layout/gather_dims.h"

namespace dnnx::cuda {

namespace {

KernelChoice plan_expand(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                         const std::vector<TensorInfo>& outputs) {
  const Shape& x = inputs[0].info.shape;
  const Shape& y = outputs[0].shape;
  const std::vector<int64_t> strides = packed_strides(x);
  std::vector<std::pair<int64_t, int64_t>> walk;  // (size, stride in X): 0 along the broadcast dims
  const size_t lead = y.size() - x.size();
  for (size_t d = 0; d < y.size(); ++d) {
    const bool from_x = d >= lead && x[d - lead] == y[d];
    walk.emplace_back(y[d], from_x ? strides[d - lead] : 0);
  }
  const BroadcastDims dims = merged_gather_dims(node, walk, "Expand of " + shape_str(x) + " to " + shape_str(y));
  return gather_choice(ctx, "broadcast gather kernel", dims, dtype_size(inputs[0].info.dtype), numel(y));
}

}  // namespace

void register_cuda_expand_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Expand", bind(ctx, plan_expand)).with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda
