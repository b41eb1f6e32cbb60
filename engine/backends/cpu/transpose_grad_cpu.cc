// Transpose's gradient is a Transpose of dY by the inverse permutation: this file plans the
// forward backend's own Transpose kernel for it (so it gets the tiled copy for free).
#include "backends/cpu/cpu_grad_kernels.h"
#include "ops/transpose.h"

namespace dnnx {

namespace {

class TransposeGradKernel final : public GradKernel {
 public:
  explicit TransposeGradKernel(std::unique_ptr<Kernel> inverse) : inverse_(std::move(inverse)) {}

  void run(const GradArgs& args) const override {
    if (!args.d_inputs[0]) return;
    const void* in[] = {args.d_outputs[0]};
    void* out[] = {args.d_inputs[0]};
    inverse_->run(KernelArgs{in, out, args.workspace});
  }

 private:
  std::unique_ptr<Kernel> inverse_;  // dX = transpose(dY, inverse perm)
};

GradChoice plan_transpose_grad(const GradRequest& r) {
  const std::vector<int64_t> perm = transpose_perm(r.node, r.inputs[0].info.shape.size());
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  Node node = r.node;
  node.attrs["perm"] = inverse;
  KernelChoice forward = r.forward.plan_node(node, {ValueInfo{r.outputs[0], nullptr, true}}, {r.inputs[0].info});
  GradChoice choice;
  choice.algorithm = "transpose by the inverse perm (" + forward.algorithm + ")";
  choice.workspace_bytes = forward.workspace_bytes;
  choice.kernel = std::make_unique<TransposeGradKernel>(std::move(forward.kernel));
  return choice;
}

}  // namespace

void register_cpu_transpose_grad_kernels(GradRegistry& r) { r.add("Transpose", plan_transpose_grad); }

}  // namespace dnnx
