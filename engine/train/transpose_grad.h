// Transpose's gradient on any backend: dX = Transpose(dY, inverse perm), run by the forward
// backend's own Transpose kernel planned for the inverse permutation (so it gets that backend's
// tiled copy for free). Registered by the CPU (transpose_grad_cpu.cc) and CUDA
// (layout_grad_cuda.cc) gradient lists.
#pragma once
#include <memory>
#include <vector>

#include "ops/layout/transpose.h"
#include "runtime/training.h"

namespace dnnx {

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

inline GradChoice plan_transpose_grad(const GradRequest& r) {
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

}  // namespace dnnx
