// Tile on CUDA: one strided gather (gather_kernels.cu), any element size. Y [r0*d0, r1*d1, ...]
// is walked as [r0, d0, r1, d1, ...] with X's strides [0, s0, 0, s1, ...] (gather_dims.h merges
// neighbours: repeats of 1 vanish, and X's dims between them join); the repeats are Y's dims
// over X's (the planner has checked them against the constant repeats). The gradient: each dX
// element sums its tiles in the CPU's order (glue_kernels.h: launch_tile_grad), float32.
#include "backends/cuda/backend/lambda_grad.h"
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/layout/gather_dims.h"

namespace dnnx::cuda {

namespace {

KernelChoice plan_tile(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                       const std::vector<TensorInfo>& outputs) {
  const Shape& x = inputs[0].info.shape;
  const Shape& y = outputs[0].shape;
  const std::vector<int64_t> strides = packed_strides(x);
  std::vector<std::pair<int64_t, int64_t>> walk;  // (size, stride in X), outermost first
  for (size_t d = 0; d < x.size(); ++d) {
    walk.emplace_back(y[d] / x[d], 0);  // an empty Y never reaches a kernel: x[d] > 0
    walk.emplace_back(x[d], strides[d]);
  }
  const BroadcastDims dims = merged_gather_dims(node, walk, "Tile of " + shape_str(x) + " to " + shape_str(y));
  return gather_choice(ctx, "tile gather kernel", dims, dtype_size(inputs[0].info.dtype), numel(y));
}

GradChoice plan_tile_grad(const GradRequest& r) {
  require_cuda_float(r.node, r.inputs[0].info, "input");
  const Shape& x = r.inputs[0].info.shape;
  const Shape& y = r.outputs[0].shape;
  if (x.size() > static_cast<size_t>(kMaxGlueDims)) {
    node_fail<UnsupportedModelError>(r.node, "the CUDA gradient takes inputs of at most " +
                                                 std::to_string(kMaxGlueDims) + " dims, not " + shape_str(x));
  }
  TileDims t;
  t.rank = static_cast<int>(x.size());
  const std::vector<int64_t> y_strides = packed_strides(y);
  for (size_t d = 0; d < x.size(); ++d) {
    t.size[d] = x[d];
    t.reps[d] = x[d] ? y[d] / x[d] : 0;
    t.y_stride[d] = y_strides[d];
  }
  const int64_t n = numel(x);
  const CudaContext* c = &cuda_context_of(r);
  return make_grad_choice("sum over the tiles", [=](const GradArgs& a) {
    if (float* dx = a.d_inputs[0]) launch_tile_grad(a.d_outputs[0], dx, n, t, c->stream);
  });
}

}  // namespace

void register_cuda_tile_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Tile", bind(ctx, plan_tile)).with_dtypes(kFloatAndHalves).with_gradient(plan_tile_grad);
}

}  // namespace dnnx::cuda
