// DepthToSpace and SpaceToDepth on the CPU: x's bytes seen as the 6-D view of
// ops/layout/space_depth.h and copied permuted (the planned transpose of transpose_cpu.h), any
// element size.
#include "backends/cpu/layout/transpose_cpu.h"
#include "ops/layout/space_depth.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

class BlockPermuteKernel final : public Kernel {
 public:
  explicit BlockPermuteKernel(TransposePlan plan) : plan_(std::move(plan)) {}
  void run(const KernelArgs& args) const override { transpose_copy(plan_, args.inputs[0], args.outputs[0]); }

 private:
  TransposePlan plan_;
};

KernelChoice plan_space_depth(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const BlockPermute bp = block_permute(node, inputs[0].info.shape);
  TransposePlan plan = plan_transpose(bp.view, bp.perm, dtype_size(inputs[0].info.dtype));
  KernelChoice choice;
  choice.algorithm = std::string("6-D transpose, ") + transpose_path_name(plan.path);
  choice.kernel = std::make_unique<BlockPermuteKernel>(std::move(plan));
  return choice;
}

}  // namespace

void register_cpu_space_depth_kernels(KernelRegistry& r) {
  r.add("DepthToSpace", plan_space_depth);
  r.add("SpaceToDepth", plan_space_depth);
}

}  // namespace dnnx
