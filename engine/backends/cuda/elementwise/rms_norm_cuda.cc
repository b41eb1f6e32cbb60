// RMSNormalization (opset 23) on CUDA, mirroring backends/cpu/normalization/moment_norms_cpu.cc
// over ops/normalization/moment_norms.h's geometry: one block per row (normalization_kernels.cu),
// float32, float16 or bfloat16 storage with float arithmetic. The scale's numpy broadcast to the
// normalized dims is walked on the device through per-dim strides (RmsScaleWalk), merged at plan
// time; a broadcast that needs more than kMaxScaleDims dims after merging runs on the host. The
// gradient (float32) beside it: a row pass for dX and each row's 1 / rms, a column pass for
// dscale (then summed per scale element when the scale is broadcast).
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/elementwise/normalization_kernels.h"
#include "ops/normalization/moment_norms.h"

namespace dnnx::cuda {

namespace {

// The walk of scale's elements over the normalized dims x[axis:] (scale right-aligned to them,
// its size-1 and missing dims read at 0), size-1 dims dropped and neighbours merged.
RmsScaleWalk scale_walk(const Node& node, const Shape& x, const Shape& scale) {
  const int64_t axis = normalize_axis(node, node.attr_int("axis", -1), static_cast<int64_t>(x.size()));
  const Shape normalized(x.begin() + axis, x.end());
  const size_t lead = normalized.size() - scale.size();
  const std::vector<int64_t> scale_strides = packed_strides(scale);
  std::vector<std::pair<int64_t, int64_t>> dims;  // (size, scale stride), outermost first
  for (size_t d = 0; d < normalized.size(); ++d) {
    if (normalized[d] == 1) continue;
    const int64_t stride = d < lead || scale[d - lead] == 1 ? 0 : scale_strides[d - lead];
    // Merge with the previous dim when stepping it jumps over exactly this one (or both are 0).
    if (!dims.empty() && dims.back().second == stride * normalized[d]) {
      dims.back().first *= normalized[d];
      dims.back().second = stride;
    } else {
      dims.emplace_back(normalized[d], stride);
    }
  }
  if (dims.size() > static_cast<size_t>(kMaxScaleDims)) {
    node_fail<UnsupportedModelError>(node, "scale " + shape_str(scale) + " broadcasts to " + shape_str(normalized) +
                                               " over more than " + std::to_string(kMaxScaleDims) + " dims");
  }
  RmsScaleWalk w;
  w.rank = static_cast<int>(dims.size());
  int64_t inner = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    w.size[d] = dims[d].first;
    w.stride[d] = dims[d].second;
    w.inner[d] = inner;
    inner *= dims[d].first;
  }
  return w;
}

KernelChoice plan_rms_norm(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                           const std::vector<TensorInfo>&) {
  const DType dtype = inputs[0].info.dtype;
  require_cuda_floating(node, inputs[0].info, dtype, "X");
  require_cuda_floating(node, inputs[1].info, dtype, "scale");
  const Shape& x = inputs[0].info.shape;
  const RmsNormGeometry g = rms_norm_geometry(node, x, inputs[1].info.shape);
  const RmsScaleWalk walk = scale_walk(node, x, inputs[1].info.shape);
  const CudaContext* c = &ctx;
  return make_choice("row kernel", [=](const KernelArgs& a) {
    launch_rms_norm(a.in<void>(0), a.in<void>(1), a.out<void>(0), g.rows, g.row_len, g.epsilon, walk, dtype,
                    c->stream);
  });
}

class RmsNormGradKernel final : public GradKernel {
 public:
  RmsNormGradKernel(const CudaContext& ctx, int64_t rows, int64_t row_len, float epsilon, RmsScaleWalk walk,
                    int64_t scale_numel)
      : ctx_(ctx), rows_(rows), row_len_(row_len), epsilon_(epsilon), walk_(walk), scale_numel_(scale_numel) {}
  void run(const GradArgs& args) const override {
    launch_rms_norm_grad(args.in(0), args.in(1), args.d_outputs[0], args.d_inputs[0], args.d_inputs[1], rows_,
                         row_len_, epsilon_, walk_, scale_numel_, static_cast<float*>(args.workspace), ctx_.stream);
  }

 private:
  const CudaContext& ctx_;
  int64_t rows_, row_len_;
  float epsilon_;
  RmsScaleWalk walk_;
  int64_t scale_numel_;
};

GradChoice plan_rms_norm_grad(const GradRequest& r) {
  require_cuda_float(r.node, r.inputs[0].info, "X");
  const Shape& x = r.inputs[0].info.shape;
  const Shape& scale = r.inputs[1].info.shape;
  const RmsNormGeometry g = rms_norm_geometry(r.node, x, scale);
  const RmsScaleWalk walk = scale_walk(r.node, x, scale);
  GradChoice choice;
  choice.algorithm = "row kernel + column kernel";
  choice.workspace_bytes = rms_norm_grad_workspace(g.rows, g.row_len, walk) * sizeof(float);
  choice.kernel = std::make_unique<RmsNormGradKernel>(cuda_context_of(r), g.rows, g.row_len, g.epsilon, walk,
                                                      numel(scale));
  return choice;
}

}  // namespace

void register_cuda_rms_norm_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("RMSNormalization", bind(ctx, plan_rms_norm)).with_dtypes(kFloatAndHalves).with_gradient(plan_rms_norm_grad);
}

}  // namespace dnnx::cuda
