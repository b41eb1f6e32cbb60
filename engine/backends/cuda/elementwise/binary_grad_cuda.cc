// The gradients of the broadcasting Add, Sub, Mul and Div on CUDA, mirroring binary_grad_cpu.cc:
// a side broadcast to the output receives dY summed over the dims it was repeated along; with a
// and b standing for the inputs broadcast to the output:
//   Add  dA = sum(dY)          dB = sum(dY)
//   Sub  dA = sum(dY)          dB = -sum(dY)
//   Mul  dA = sum(dY * b)      dB = sum(dY * a)
//   Div  dA = sum(dY / b)      dB = -sum(dY * (y / b))    (y = a / b, kept from the forward)
// The products run as the forward's broadcast binary kernel (binary_kernels.cu) into the
// workspace (one output-sized buffer, two for Div); the sums as the reduce-sum kernel (grad_kernels.h), one
// block per element of the side, in a fixed order (deterministic). A side of the output's
// shape is a scaled copy.
#include "backends/cuda/elementwise/broadcast_plan.h"
#include "backends/cuda/elementwise/side_reduction.h"
#include "backends/cuda/train/grad_kernels.h"
#include "backends/cuda/backend/cuda_kernels.h"

namespace dnnx::cuda {

namespace {

enum class Op { Add, Sub, Mul, Div };

class BinaryGradKernel final : public GradKernel {
 public:
  BinaryGradKernel(const CudaContext& ctx, Op op, const Node& node, const Shape& a, const Shape& b, const Shape& out)
      : ctx_(ctx), op_(op), n_(numel(out)), reduce_a_(plan_reduction(node, a, out)),
        reduce_b_(plan_reduction(node, b, out)), dy_by_a_(plan_broadcast(node, out, a, out)),
        dy_by_b_(plan_broadcast(node, out, b, out)) {}

  void run(const GradArgs& args) const override {
    const float* dy = args.d_outputs[0];
    float* tmp = static_cast<float*>(args.workspace);
    if (float* da = args.d_inputs[0]) {
      const float* src = dy;
      if (op_ == Op::Mul || op_ == Op::Div) {  // dY * b or dY / b
        launch_binary(op_ == Op::Mul ? BinaryKind::Mul : BinaryKind::Div, dy, args.in(1), tmp, n_, dy_by_b_,
                      ctx_.stream);
        src = tmp;
      }
      launch_reduce_sum(src, da, reduce_a_.size, reduce_a_.kept, reduce_a_.reduced, 1.0f, ctx_.stream);
    }
    if (float* db = args.d_inputs[1]) {
      const float* src = dy;
      float scale = op_ == Op::Sub ? -1.0f : 1.0f;
      if (op_ == Op::Mul) {  // dY * a
        launch_binary(BinaryKind::Mul, dy, args.in(0), tmp, n_, dy_by_a_, ctx_.stream);
        src = tmp;
      } else if (op_ == Op::Div) {  // -(dY * (y / b))
        float* product = tmp + n_;
        launch_binary(BinaryKind::Div, args.out(0), args.in(1), tmp, n_, dy_by_b_, ctx_.stream);
        launch_binary(BinaryKind::Mul, tmp, dy, product, n_, BroadcastDims{}, ctx_.stream);
        src = product;
        scale = -1.0f;
      }
      launch_reduce_sum(src, db, reduce_b_.size, reduce_b_.kept, reduce_b_.reduced, scale, ctx_.stream);
    }
  }

 private:
  const CudaContext& ctx_;
  Op op_;
  int64_t n_;
  SideReduction reduce_a_, reduce_b_;
  BroadcastDims dy_by_a_, dy_by_b_;  // dY [out] with A (B) broadcast to it
};

GradFactory binary_grad(Op op) {
  return [op](const GradRequest& r) {
    GradChoice choice;
    const Shape& out = r.outputs[0].shape;
    choice.algorithm = "broadcast kernel + reduce-sum kernel";
    const size_t buffers = op == Op::Div ? 2 : op == Op::Mul ? 1 : 0;  // output-sized
    choice.workspace_bytes = buffers * static_cast<size_t>(numel(out)) * sizeof(float);
    choice.kernel = std::make_unique<BinaryGradKernel>(cuda_context_of(r), op, r.node, r.inputs[0].info.shape,
                                                       r.inputs[1].info.shape, out);
    return choice;
  };
}

}  // namespace

void register_cuda_binary_grad_kernels(KernelRegistry& r, const CudaContext&) {
  r.at("Add").with_gradient(binary_grad(Op::Add));
  r.at("Sub").with_gradient(binary_grad(Op::Sub));
  r.at("Mul").with_gradient(binary_grad(Op::Mul));
  r.at("Div").with_gradient(binary_grad(Op::Div));
}

}  // namespace dnnx::cuda
