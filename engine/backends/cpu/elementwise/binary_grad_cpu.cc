// The gradients of the broadcasting Add, Sub, Mul and Div. A side that was broadcast to the
// output receives dY summed over the dims it was repeated along (the adjoint of the broadcast,
// broadcast_sum.h); with a and b standing for the inputs broadcast to the output:
//   Add  dA = sum(dY)          dB = sum(dY)
//   Sub  dA = sum(dY)          dB = -sum(dY)
//   Mul  dA = sum(dY * b)      dB = sum(dY * a)
//   Div  dA = sum(dY / b)      dB = -sum(dY * y / b)    (y = a / b, kept from the forward)
// The workspace holds one output-sized product before it is summed.
#include <algorithm>

#include "backends/cpu/elementwise/broadcast_sum.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

enum class BinaryOp { Add, Sub, Mul, Div };

class BinaryGradKernel final : public GradKernel {
 public:
  BinaryGradKernel(BinaryOp op, const Shape& a, const Shape& b, const Shape& out)
      : op_(op), walk_a_(broadcast_walk(a, out)), walk_b_(broadcast_walk(b, out)), size_a_(numel(a)),
        size_b_(numel(b)), n_(numel(out)) {}

  void run(const GradArgs& args) const override {
    const float* dy = args.d_outputs[0];
    float* tmp = static_cast<float*>(args.workspace);
    float* da = args.d_inputs[0];
    float* db = args.d_inputs[1];
    if (da) {
      const float* src = dy;
      if (op_ == BinaryOp::Mul || op_ == BinaryOp::Div) {
        broadcast_expand(walk_b_, args.in(1), tmp);
        for (int64_t i = 0; i < n_; ++i) tmp[i] = op_ == BinaryOp::Mul ? dy[i] * tmp[i] : dy[i] / tmp[i];
        src = tmp;
      }
      broadcast_reduce(walk_a_, src, da, size_a_);
    }
    if (db) {
      if (op_ == BinaryOp::Add || op_ == BinaryOp::Sub) {
        broadcast_reduce(walk_b_, dy, db, size_b_);
        if (op_ == BinaryOp::Sub) {
          for (int64_t j = 0; j < size_b_; ++j) db[j] = -db[j];
        }
        return;
      }
      if (op_ == BinaryOp::Mul) {
        broadcast_expand(walk_a_, args.in(0), tmp);
        for (int64_t i = 0; i < n_; ++i) tmp[i] *= dy[i];
      } else {
        const float* y = args.out(0);
        broadcast_expand(walk_b_, args.in(1), tmp);
        for (int64_t i = 0; i < n_; ++i) tmp[i] = -dy[i] * y[i] / tmp[i];
      }
      broadcast_reduce(walk_b_, tmp, db, size_b_);
    }
  }

 private:
  BinaryOp op_;
  BroadcastWalk walk_a_, walk_b_;
  int64_t size_a_, size_b_, n_;
};

GradFactory binary_grad(BinaryOp op) {
  return [op](const GradRequest& r) {
    GradChoice choice;
    choice.algorithm = "broadcast reduce";
    if (op == BinaryOp::Mul || op == BinaryOp::Div) {
      choice.workspace_bytes = static_cast<size_t>(numel(r.outputs[0].shape)) * sizeof(float);
    }
    choice.kernel = std::make_unique<BinaryGradKernel>(op, r.inputs[0].info.shape, r.inputs[1].info.shape,
                                                       r.outputs[0].shape);
    return choice;
  };
}

}  // namespace

void register_cpu_binary_grad_kernels(KernelRegistry& r) {
  r.at("Add").with_gradient(binary_grad(BinaryOp::Add));
  r.at("Sub").with_gradient(binary_grad(BinaryOp::Sub));
  r.at("Mul").with_gradient(binary_grad(BinaryOp::Mul));
  r.at("Div").with_gradient(binary_grad(BinaryOp::Div));
}

}  // namespace dnnx
