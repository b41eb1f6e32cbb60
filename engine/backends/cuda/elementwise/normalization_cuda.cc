// LayerNormalization, InstanceNormalization and GroupNormalization on CUDA, forward and gradient
// side by side (float32; the forward also in float16 and bfloat16 storage, summing in float32), mirroring backends/cpu/normalization/normalization_cpu.cc over ops/normalization/normalization.h's
// one form. No cuDNN: its normalization API covers neither the per-row LayerNorm layout nor
// GroupNorm's parameter indexing, and the plain kernels keep both backends' formulas alike.
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/elementwise/normalization_kernels.h"

namespace dnnx::cuda {

namespace {

constexpr size_t kScale = 1, kBias = 2, kMeanOut = 1, kInvStdOut = 2;

bool has_bias(const Node& node) { return node.inputs.size() > kBias && !node.inputs[kBias].empty(); }

KernelChoice plan_norm(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                       const std::vector<TensorInfo>& outputs) {
  const DType dtype = inputs[0].info.dtype;
  require_cuda_floating(node, inputs[0].info, dtype, "X");
  require_cuda_floating(node, inputs[kScale].info, dtype, "Scale");
  if (has_bias(node)) require_cuda_floating(node, inputs[kBias].info, dtype, "B");
  for (size_t i = 1; i < outputs.size(); ++i) {
    if (node.has_output(i) && outputs[i].dtype != dtype) {
      node_fail<UnsupportedModelError>(node, "the CUDA kernel writes Mean and InvStdDev in X's type (" +
                                                 std::string(dtype_name(dtype)) + "), not " +
                                                 dtype_name(outputs[i].dtype));
    }
  }
  const NormGeometry g = norm_geometry(node, inputs[0].info.shape);
  const bool bias = has_bias(node), mean = node.has_output(kMeanOut), inv_std = node.has_output(kInvStdOut);
  const CudaContext* c = &ctx;
  return make_choice(g.row_len <= 1024 ? "warp row kernel" : "row kernel", [=](const KernelArgs& a) {
    launch_norm(g, a.in<void>(0), a.in<void>(kScale), bias ? a.in<void>(kBias) : nullptr, a.out<void>(0),
                mean ? a.out<void>(kMeanOut) : nullptr, inv_std ? a.out<void>(kInvStdOut) : nullptr, dtype, c->stream);
  });
}

// Workspace: 2 * rows floats (each row's statistics).
class NormGradKernel final : public GradKernel {
 public:
  NormGradKernel(const CudaContext& ctx, NormGeometry g, bool bias) : ctx_(ctx), g_(g), bias_(bias) {}
  void run(const GradArgs& args) const override {
    launch_norm_grad(g_, args.in(0), args.in(kScale), args.d_outputs[0], args.d_inputs[0], args.d_inputs[kScale],
                     bias_ ? args.d_inputs[kBias] : nullptr, static_cast<float*>(args.workspace), ctx_.stream);
  }

 private:
  const CudaContext& ctx_;
  NormGeometry g_;
  bool bias_;
};

GradChoice plan_norm_grad(const GradRequest& r) {
  require_cuda_float(r.node, r.inputs[0].info, "X");
  const NormGeometry g = norm_geometry(r.node, r.inputs[0].info.shape);
  GradChoice choice;
  choice.algorithm = "row kernel + parameter kernel";
  choice.workspace_bytes = 2 * static_cast<size_t>(g.rows) * sizeof(float);
  choice.kernel = std::make_unique<NormGradKernel>(cuda_context_of(r), g, has_bias(r.node));
  return choice;
}

}  // namespace

void register_cuda_normalization_kernels(KernelRegistry& r, const CudaContext& ctx) {
  for (const char* op : {"LayerNormalization", "InstanceNormalization", "GroupNormalization"}) {
    r.add(op, bind(ctx, plan_norm)).with_gradient(plan_norm_grad).with_dtypes(kFloatAndHalves);
  }
}

}  // namespace dnnx::cuda
