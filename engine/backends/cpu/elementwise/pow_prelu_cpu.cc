// Pow and PRelu on the CPU (ops/elementwise/pow_prelu.cc), forward and gradient side by side. The forwards
// run the one broadcasting loop (broadcast_binary.h); the gradients expand the sides to the
// output and sum each side's terms back over its broadcast dims (broadcast_sum.h). With a, b
// the inputs broadcast to the output:
//   Pow    z = a^b        dA = sum(dZ * b * a^(b-1))     dB = sum(dZ * z * ln a)
//          (as PyTorch: the dA term is 0 where b == 0, the dB term 0 where a == 0 and b >= 0)
//   PRelu  y = x < 0 ? s x : x     dX = dY * (x < 0 ? s : 1)     dS = sum(dY * (x < 0 ? x : 0))
// An integer exponent is converted to float into the workspace first (numel(B) floats).
#include <cmath>
#include <cstring>

#include "backends/cpu/elementwise/broadcast_binary.h"
#include "backends/cpu/elementwise/broadcast_sum.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

struct PowFn {
  float operator()(float a, float b) const { return std::pow(a, b); }
};

struct PReluFn {
  float operator()(float x, float slope) const { return x < 0.0f ? slope * x : x; }
};

// B's elements as float: B itself, or its int32/int64 values converted into `to`.
const float* exponent_floats(DType dtype, const void* b, int64_t n, float* to) {
  if (dtype == DType::Float32) return static_cast<const float*>(b);
  for (int64_t i = 0; i < n; ++i) {
    to[i] = dtype == DType::Int32 ? static_cast<float>(static_cast<const int32_t*>(b)[i])
                                  : static_cast<float>(static_cast<const int64_t*>(b)[i]);
  }
  return to;
}

// Pow with an integer exponent: the float loop over a converted copy of B.
class IntExponentPowKernel final : public Kernel {
 public:
  IntExponentPowKernel(std::unique_ptr<Kernel> pow, DType dtype, int64_t n)
      : pow_(std::move(pow)), dtype_(dtype), n_(n) {}
  void run(const KernelArgs& args) const override {
    float* converted = static_cast<float*>(args.workspace);
    const void* in[2] = {args.inputs[0], exponent_floats(dtype_, args.inputs[1], n_, converted)};
    pow_->run(KernelArgs{in, args.outputs, nullptr});
  }

 private:
  std::unique_ptr<Kernel> pow_;
  DType dtype_;
  int64_t n_;
};

KernelChoice plan_pow(const Node&, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  KernelChoice choice = broadcast_binary_choice<float, float>(inputs, outputs, PowFn{});
  const DType exponent = inputs[1].info.dtype;
  if (exponent != DType::Float32) {
    const int64_t n = numel(inputs[1].info.shape);
    choice.kernel = std::make_unique<IntExponentPowKernel>(std::move(choice.kernel), exponent, n);
    choice.workspace_bytes = static_cast<size_t>(n) * sizeof(float);
    choice.algorithm += " (integer exponent as float)";
  }
  return choice;
}

KernelChoice plan_prelu(const Node&, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  return broadcast_binary_choice<float, float>(inputs, outputs, PReluFn{});
}

// Workspace [n] a, [n] b, [n] terms, then B as float when it is an integer.
class PowGradKernel final : public GradKernel {
 public:
  PowGradKernel(const Shape& a, const Shape& b, const Shape& out, DType exponent)
      : walk_a_(broadcast_walk(a, out)), walk_b_(broadcast_walk(b, out)), size_a_(numel(a)), size_b_(numel(b)),
        n_(numel(out)), exponent_(exponent) {}

  void run(const GradArgs& args) const override {
    float* da = args.d_inputs[0];
    float* db = args.d_inputs[1];
    if (!da && !db) return;
    float* a = static_cast<float*>(args.workspace);
    float* b = a + n_;
    float* terms = b + n_;
    broadcast_expand(walk_a_, args.in(0), a);
    broadcast_expand(walk_b_, exponent_floats(exponent_, args.inputs[1], size_b_, terms + n_), b);
    const float* dz = args.d_outputs[0];
    const float* z = args.out(0);
    if (da) {
      for (int64_t i = 0; i < n_; ++i) terms[i] = b[i] == 0.0f ? 0.0f : dz[i] * b[i] * std::pow(a[i], b[i] - 1.0f);
      broadcast_reduce(walk_a_, terms, da, size_a_);
    }
    if (db) {  // an integer exponent never asks for one (the trainer passes gradients to floats only)
      for (int64_t i = 0; i < n_; ++i) {
        terms[i] = a[i] == 0.0f && b[i] >= 0.0f ? 0.0f : dz[i] * z[i] * std::log(a[i]);
      }
      broadcast_reduce(walk_b_, terms, db, size_b_);
    }
  }

 private:
  BroadcastWalk walk_a_, walk_b_;
  int64_t size_a_, size_b_, n_;
  DType exponent_;
};

GradChoice plan_pow_grad(const GradRequest& r) {
  const Shape& out = r.outputs[0].shape;
  const DType exponent = r.inputs[1].info.dtype;
  GradChoice choice;
  choice.algorithm = "broadcast reduce";
  choice.workspace_bytes = static_cast<size_t>(3 * numel(out) + numel(r.inputs[1].info.shape)) * sizeof(float);
  choice.kernel = std::make_unique<PowGradKernel>(r.inputs[0].info.shape, r.inputs[1].info.shape, out, exponent);
  return choice;
}

// Workspace [n]: the slope expanded to X's shape, then dS's terms.
class PReluGradKernel final : public GradKernel {
 public:
  PReluGradKernel(const Shape& x, const Shape& slope)
      : walk_(broadcast_walk(slope, x)), n_(numel(x)), slopes_(numel(slope)) {}

  void run(const GradArgs& args) const override {
    const float *x = args.in(0), *dy = args.d_outputs[0];
    float* tmp = static_cast<float*>(args.workspace);
    if (float* dx = args.d_inputs[0]) {
      broadcast_expand(walk_, args.in(1), tmp);
      for (int64_t i = 0; i < n_; ++i) dx[i] = x[i] < 0.0f ? dy[i] * tmp[i] : dy[i];
    }
    if (float* ds = args.d_inputs[1]) {
      for (int64_t i = 0; i < n_; ++i) tmp[i] = x[i] < 0.0f ? dy[i] * x[i] : 0.0f;
      broadcast_reduce(walk_, tmp, ds, slopes_);
    }
  }

 private:
  BroadcastWalk walk_;
  int64_t n_, slopes_;
};

GradChoice plan_prelu_grad(const GradRequest& r) {
  const Shape& x = r.inputs[0].info.shape;
  GradChoice choice;
  choice.algorithm = "broadcast reduce";
  choice.workspace_bytes = static_cast<size_t>(numel(x)) * sizeof(float);
  choice.kernel = std::make_unique<PReluGradKernel>(x, r.inputs[1].info.shape);
  return choice;
}

}  // namespace

void register_cpu_pow_prelu_kernels(KernelRegistry& r) {
  r.add("Pow", plan_pow).with_gradient(plan_pow_grad);
  r.add("PRelu", plan_prelu).with_gradient(plan_prelu_grad);
}

}  // namespace dnnx
