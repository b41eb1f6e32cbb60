// CumSum and CumProd on CUDA (cumulative_kernels.cu): x float32, float16, bfloat16, int32 or
// int64, the axis a value input (known at plan time), exclusive and reverse, as backends/cpu/
// reduce/cumulative_cpu.cc; CumSum's gradient (float32) as the CPU's: dx = the running sum of dy
// in the other direction, exclusive alike. CumProd has no CUDA gradient (the CPU's).
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/elementwise/cumulative_kernels.h"

namespace dnnx::cuda {

namespace {

KernelChoice plan_cumulative(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                             const std::vector<TensorInfo>&) {
  const DType dtype = inputs[0].info.dtype;
  if (dtype != DType::Int32 && dtype != DType::Int64) require_cuda_floating(node, inputs[0].info, dtype, "x");
  const CumulativeGeometry g = cumulative_geometry(node, inputs);
  const bool product = node.op_type == "CumProd";
  const CudaContext* c = &ctx;
  return make_choice(g.inner >= 32 ? "scan kernel (a thread per line)" : "scan kernel (a warp per line)",
                     [=](const KernelArgs& a) {
                       launch_cumulative(a.in<void>(0), a.out<void>(0), g, dtype, product, c->stream);
                     });
}

class CumSumGradKernel final : public GradKernel {
 public:
  CumSumGradKernel(const CudaContext& ctx, CumulativeGeometry g) : ctx_(ctx), g_(g) {}
  void run(const GradArgs& args) const override {
    float* dx = args.d_inputs[0];
    if (!dx) return;
    CumulativeGeometry back = g_;
    back.reverse = !g_.reverse;
    launch_cumulative(args.d_outputs[0], dx, back, DType::Float32, false, ctx_.stream);
  }

 private:
  const CudaContext& ctx_;
  CumulativeGeometry g_;
};

GradChoice plan_cumsum_grad(const GradRequest& r) {
  require_cuda_float(r.node, r.inputs[0].info, "x");
  GradChoice choice;
  choice.algorithm = "scan kernel";
  choice.kernel = std::make_unique<CumSumGradKernel>(cuda_context_of(r), cumulative_geometry(r.node, r.inputs));
  return choice;
}

}  // namespace

void register_cuda_cumsum_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("CumSum", bind(ctx, plan_cumulative)).with_dtypes(kFloatAndHalves).with_gradient(plan_cumsum_grad);
  r.add("CumProd", bind(ctx, plan_cumulative)).with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda
