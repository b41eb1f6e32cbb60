// GlobalAveragePool and GlobalMaxPool on CUDA (NCHW), real-world ops of issue #5: one block per
// plane, a block-wide sum or max (global_pool_kernels.cu), float32, float16 or bfloat16 (half
// storage; float sums either way). "GlobalAveragePool@NHWC" is pool_cuda.cc's.
// Their gradients (float32, as all training) are ReduceMean's and ReduceMax's over the spatial
// dims, the CPU's rules (backends/cpu/pool/global_pool_cpu.cc).
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/elementwise/reduce_grad_cuda.h"
#include "backends/cuda/layout/glue_kernels.h"

namespace dnnx::cuda {

namespace {

Factory global_pool_factory(const CudaContext& ctx, bool max) {
  return [&ctx, max](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
    const DType dtype = inputs[0].info.dtype;  // float sums at any element type
    require_cuda_floating(node, inputs[0].info, inputs[0].info.dtype, "X");
    const Shape& x = inputs[0].info.shape;
    const int64_t planes = x.size() >= 2 ? x[0] * x[1] : 0;
    const int64_t plane = planes ? numel(x) / planes : 0;
    const CudaContext* c = &ctx;
    return make_choice("block reduction kernel", [=](const KernelArgs& a) {
      launch_global_pool(a.in<void>(0), a.out<void>(0), planes, plane, max, dtype, c->stream);
    });
  };
}

GradFactory global_pool_grad(ReduceKind kind) {
  return [kind](const GradRequest& r) {
    return plan_reduction_grad(r, kind, spatial_dims(r.inputs[0].info.shape.size()));
  };
}

}  // namespace

void register_cuda_global_pool_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("GlobalAveragePool", global_pool_factory(ctx, false))
      .with_dtypes(kFloatAndHalves)
      .with_gradient(global_pool_grad(ReduceKind::Mean));
  r.add("GlobalMaxPool", global_pool_factory(ctx, true))
      .with_dtypes(kFloatAndHalves)
      .with_gradient(global_pool_grad(ReduceKind::Max));
}

}  // namespace dnnx::cuda
