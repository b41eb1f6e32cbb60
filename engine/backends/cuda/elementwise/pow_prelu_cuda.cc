// Pow and PRelu on CUDA, forward (float32, float16 or bfloat16) and gradient (float32) side by side,
// mirroring backends/cpu/elementwise/pow_prelu_cpu.cc: the forward is one broadcast kernel; the gradient
// writes each side's output-shaped terms (pow_prelu_kernels.h) into the workspace and sums them
// to the side with the reduce-sum kernel (train/grad_kernels.h; deterministic, as Add's). PRelu's
// dX is its term itself (X has the output's shape). Pow with an integer exponent is refused at
// plan time (it runs on the host: Note [host fallback]).
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/elementwise/broadcast_plan.h"
#include "backends/cuda/elementwise/pow_prelu_kernels.h"
#include "backends/cuda/elementwise/side_reduction.h"
#include "backends/cuda/train/grad_kernels.h"

namespace dnnx::cuda {

namespace {

KernelFactory pair_factory(const CudaContext& ctx, PairKind kind) {
  return [&ctx, kind](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
    const DType dtype = inputs[0].info.dtype;
    require_cuda_floating(node, inputs[0].info, dtype, kind == PairKind::Pow ? "base X" : "X");
    require_cuda_floating(node, inputs[1].info, dtype,
                          kind == PairKind::Pow ? "exponent Y (an integer exponent runs on the host)" : "slope");
    const BroadcastDims dims = plan_broadcast(node, inputs[0].info.shape, inputs[1].info.shape, outputs[0].shape);
    const int64_t n = numel(outputs[0].shape);
    const CudaContext* c = &ctx;
    return make_choice("broadcast kernel", [=](const KernelArgs& a) {
      launch_pow_prelu(kind, a.in<void>(0), a.in<void>(1), a.out<void>(0), n, dims, dtype, c->stream);
    });
  };
}

// Workspace: [n] term_a (Pow only: PRelu writes dX directly), [n] term_b.
class PairGradKernel final : public GradKernel {
 public:
  PairGradKernel(const CudaContext& ctx, PairKind kind, const Node& node, const Shape& a, const Shape& b,
                 const Shape& out)
      : ctx_(ctx), kind_(kind), n_(numel(out)), dims_(plan_broadcast(node, a, b, out)),
        reduce_a_(plan_reduction(node, a, out)), reduce_b_(plan_reduction(node, b, out)) {}

  void run(const GradArgs& args) const override {
    float* da = args.d_inputs[0];
    float* db = args.d_inputs[1];
    if (!da && !db) return;
    float* ws = static_cast<float*>(args.workspace);
    float* term_a = da ? (kind_ == PairKind::PRelu ? da : ws) : nullptr;
    float* term_b = db ? ws + n_ : nullptr;
    launch_pow_prelu_grad_terms(kind_, args.in(0), args.in(1), args.out(0), args.d_outputs[0], term_a, term_b, n_,
                                dims_, ctx_.stream);
    if (da && kind_ == PairKind::Pow) {
      launch_reduce_sum(term_a, da, reduce_a_.size, reduce_a_.kept, reduce_a_.reduced, 1.0f, ctx_.stream);
    }
    if (db) launch_reduce_sum(term_b, db, reduce_b_.size, reduce_b_.kept, reduce_b_.reduced, 1.0f, ctx_.stream);
  }

 private:
  const CudaContext& ctx_;
  PairKind kind_;
  int64_t n_;
  BroadcastDims dims_;
  SideReduction reduce_a_, reduce_b_;
};

GradFactory pair_grad(PairKind kind) {
  return [kind](const GradRequest& r) {
    require_cuda_float(r.node, r.inputs[0].info, "X");
    require_cuda_float(r.node, r.inputs[1].info, kind == PairKind::Pow ? "exponent Y" : "slope");
    const Shape& out = r.outputs[0].shape;
    GradChoice choice;
    choice.algorithm = "broadcast kernel + reduce-sum kernel";
    choice.workspace_bytes = 2 * static_cast<size_t>(numel(out)) * sizeof(float);
    choice.kernel = std::make_unique<PairGradKernel>(cuda_context_of(r), kind, r.node, r.inputs[0].info.shape,
                                                     r.inputs[1].info.shape, out);
    return choice;
  };
}

}  // namespace

void register_cuda_pow_prelu_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Pow", pair_factory(ctx, PairKind::Pow)).with_dtypes(kFloatAndHalves).with_gradient(pair_grad(PairKind::Pow));
  r.add("PRelu", pair_factory(ctx, PairKind::PRelu))
      .with_dtypes(kFloatAndHalves)
      .with_gradient(pair_grad(PairKind::PRelu));
}

}  // namespace dnnx::cuda
