// DepthToSpace and SpaceToDepth on CUDA: X's bytes seen as ops/layout/space_depth.h's 6-D view,
// permuted by one strided gather (gather_kernels.cu, the transpose's dims: gather_dims.h), any
// element size, as the CPU's 6-D transpose.
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/layout/gather_dims.h"
#include "ops/layout/space_depth.h"

namespace dnnx::cuda {

namespace {

KernelChoice plan_space_depth(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                              const std::vector<TensorInfo>&) {
  const BlockPermute bp = block_permute(node, inputs[0].info.shape);
  const BroadcastDims dims = transpose_gather_dims(node, bp.view, bp.perm);
  return gather_choice(ctx, dims.rank <= 1 ? "copy" : "6-D transpose gather kernel", dims,
                       dtype_size(inputs[0].info.dtype), numel(inputs[0].info.shape));
}

}  // namespace

void register_cuda_space_depth_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("DepthToSpace", bind(ctx, plan_space_depth)).with_dtypes(kFloatAndHalves);
  r.add("SpaceToDepth", bind(ctx, plan_space_depth)).with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda
