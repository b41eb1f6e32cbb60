// The gradients of the broadcasting Add, Sub, Mul and Div. A side that was broadcast to the
// output receives dY summed over the dims it was repeated along (the adjoint of the broadcast,
// walked with broadcast_walk.h); with a and b standing for the inputs broadcast to the output:
//   Add  dA = sum(dY)          dB = sum(dY)
//   Sub  dA = sum(dY)          dB = -sum(dY)
//   Mul  dA = sum(dY * b)      dB = sum(dY * a)
//   Div  dA = sum(dY / b)      dB = -sum(dY * y / b)    (y = a / b, kept from the forward)
// The workspace holds one output-sized product before it is summed.
#include <algorithm>

#include "backends/cpu/broadcast_walk.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

enum class BinaryOp { Add, Sub, Mul, Div };

// dst[j] = the sum of src's elements that read element j of the broadcast side.
void reduce_to(const BroadcastWalk& w, const float* src, float* dst, int64_t dst_size) {
  std::fill(dst, dst + dst_size, 0.0f);
  for_each_run(w, [&](int64_t out, int64_t in, int64_t count, int64_t step) {
    if (step == 0) {
      float sum = 0.0f;
      for (int64_t i = 0; i < count; ++i) sum += src[out + i];
      dst[in] += sum;
    } else {
      for (int64_t i = 0; i < count; ++i) dst[in + i] += src[out + i];
    }
  });
}

// dst [output] = src broadcast to the output.
void expand_to(const BroadcastWalk& w, const float* src, float* dst) {
  for_each_run(w, [&](int64_t out, int64_t in, int64_t count, int64_t step) {
    for (int64_t i = 0; i < count; ++i) dst[out + i] = src[in + i * step];
  });
}

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
        expand_to(walk_b_, args.in(1), tmp);
        for (int64_t i = 0; i < n_; ++i) tmp[i] = op_ == BinaryOp::Mul ? dy[i] * tmp[i] : dy[i] / tmp[i];
        src = tmp;
      }
      reduce_to(walk_a_, src, da, size_a_);
    }
    if (db) {
      if (op_ == BinaryOp::Add || op_ == BinaryOp::Sub) {
        reduce_to(walk_b_, dy, db, size_b_);
        if (op_ == BinaryOp::Sub) {
          for (int64_t j = 0; j < size_b_; ++j) db[j] = -db[j];
        }
        return;
      }
      if (op_ == BinaryOp::Mul) {
        expand_to(walk_a_, args.in(0), tmp);
        for (int64_t i = 0; i < n_; ++i) tmp[i] *= dy[i];
      } else {
        const float* y = args.out(0);
        expand_to(walk_b_, args.in(1), tmp);
        for (int64_t i = 0; i < n_; ++i) tmp[i] = -dy[i] * y[i] / tmp[i];
      }
      reduce_to(walk_b_, tmp, db, size_b_);
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
