// CumSum on CUDA (cumulative_kernels.cu): x float32, float16, bfloat16, int32 or int64, the axis
// a value input (known at plan time), exclusive and reverse, as backends/cpu/reduce/
// cumulative_cpu.cc. Forward only: its gradient is the CPU's.
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/elementwise/cumulative_kernels.h"

namespace dnnx::cuda {

namespace {

KernelChoice plan_cumsum(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                         const std::vector<TensorInfo>&) {
  const DType dtype = inputs[0].info.dtype;
  if (dtype != DType::Int32 && dtype != DType::Int64) require_cuda_floating(node, inputs[0].info, dtype, "x");
  const CumulativeGeometry g = cumulative_geometry(node, inputs);
  const CudaContext* c = &ctx;
  return make_choice(g.inner >= 32 ? "scan kernel (a thread per line)" : "scan kernel (a warp per line)",
                     [=](const KernelArgs& a) { launch_cumsum(a.in<void>(0), a.out<void>(0), g, dtype, c->stream); });
}

}  // namespace

void register_cuda_cumsum_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("CumSum", bind(ctx, plan_cumsum)).with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda
