// ReduceMean on CUDA, one of the real-world ops of issue #5: one thread per output element over
// the reduced dims (reduce_kernels.cu), float32 or float16 (precision="fp16"). More than
// kMaxGlueDims non-unit dims on one side of the reduction is refused at plan time with an
// UnsupportedModelError naming the node.
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "ops/reduce.h"

namespace dnnx::cuda {

namespace {

KernelChoice plan_reduce_mean(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                              const std::vector<TensorInfo>& outputs) {
  const bool half = inputs[0].info.dtype == DType::Float16;
  require_cuda_floating(node, inputs[0].info, inputs[0].info.dtype, "X");
  const Shape& x = inputs[0].info.shape;
  const ReduceAxes axes = reduce_axes(node, inputs, x);
  const std::vector<int64_t> strides = packed_strides(x);
  BroadcastDims out, red;
  int64_t count = 1;
  for (size_t d = 0; d < x.size(); ++d) {
    if (x[d] == 1) continue;
    BroadcastDims& dims = axes.reduced[d] ? red : out;
    if (dims.rank == kMaxGlueDims) {
      node_fail<UnsupportedModelError>(node, "X " + shape_str(x) + " has more than " + std::to_string(kMaxGlueDims) +
                                                 " non-unit dims on one side of the reduction");
    }
    dims.size[dims.rank] = x[d];
    dims.stride_a[dims.rank] = strides[d];
    ++dims.rank;
    if (axes.reduced[d]) count *= x[d];
  }
  const int64_t n = numel(outputs[0].shape);
  const CudaContext* c = &ctx;
  return make_choice("direct kernel", [=](const KernelArgs& a) {
    launch_reduce_mean(a.in<void>(0), a.out<void>(0), n, out, red, count, half, c->stream);
  });
}

}  // namespace

void register_cuda_reduce_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("ReduceMean", bind(ctx, plan_reduce_mean)).with_dtypes(kFloatAndHalf);
}

}  // namespace dnnx::cuda
