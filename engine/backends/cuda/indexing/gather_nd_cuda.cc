// GatherND on CUDA (indexing_kernels.cu): any element type, int32 or int64 indices, batch_dims,
// the geometry of ops/indexing/gather_nd.h (as backends/cpu/indexing/gather_nd_cpu.cc). An index
// out of range reads zeros (Note [device index range]). The gradient (float32): dData zeroed, then
// each dY slice added atomically into the slice it was read from (repeated tuples add up).
#include "backends/cuda/indexing/index_plan.h"
#include "ops/indexing/gather_nd.h"

namespace dnnx::cuda {

namespace {

// The kernels' geometry of a node (refused past kMaxIndexDims index values per tuple).
GatherNDDims gather_nd_dims(const Node& node, const std::vector<ValueInfo>& inputs) {
  const GatherNDGeometry geometry = gather_nd_geometry(node, inputs[0].info.shape, inputs[1].info.shape);
  if (geometry.k > kMaxIndexDims) {
    node_fail<UnsupportedModelError>(node, "the CUDA kernel takes index tuples of at most " +
                                               std::to_string(kMaxIndexDims) + " values, not " +
                                               std::to_string(geometry.k));
  }
  GatherNDDims g;
  g.batches = geometry.batches;
  g.tuples = geometry.tuples;
  g.k = geometry.k;
  g.slice = geometry.slice;
  g.batch_stride = geometry.batch_stride;
  int64_t stride = geometry.slice;
  for (int64_t j = geometry.k; j-- > 0;) {
    g.size[j] = geometry.gathered[j];
    g.stride[j] = stride;
    stride *= geometry.gathered[j];
  }
  return g;
}

KernelChoice plan_gather_nd(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                            const std::vector<TensorInfo>&) {
  const bool idx64 = int64_indices(node, inputs[1].info, "indices");
  const GatherNDDims g = gather_nd_dims(node, inputs);
  const size_t elem = dtype_size(inputs[0].info.dtype);
  const CudaContext* c = &ctx;
  KernelChoice choice = make_choice("gather kernel", [=](const KernelArgs& a) {
    launch_gather_nd(a.in<void>(0), a.in<void>(1), idx64, a.out<void>(0), elem, g, c->stream);
  });
  note_index_range(choice, false);
  return choice;
}

class GatherNDGradKernel final : public GradKernel {
 public:
  GatherNDGradKernel(const CudaContext& ctx, GatherNDDims g, bool idx64) : ctx_(ctx), g_(g), idx64_(idx64) {}
  void run(const GradArgs& args) const override {
    if (float* dx = args.d_inputs[0]) {
      launch_gather_nd_grad(args.d_outputs[0], args.inputs[1], idx64_, dx, g_, ctx_.stream);
    }
  }

 private:
  const CudaContext& ctx_;
  GatherNDDims g_;
  bool idx64_;
};

GradChoice plan_gather_nd_grad(const GradRequest& r) {
  require_cuda_float(r.node, r.inputs[0].info, "data");
  GradChoice choice;
  choice.algorithm = "atomic slice scatter-add";
  choice.kernel = std::make_unique<GatherNDGradKernel>(cuda_context_of(r), gather_nd_dims(r.node, r.inputs),
                                                       int64_indices(r.node, r.inputs[1].info, "indices"));
  return choice;
}

}  // namespace

void register_cuda_gather_nd_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("GatherND", bind(ctx, plan_gather_nd)).with_dtypes(kFloatAndHalves).with_gradient(plan_gather_nd_grad);
}

}  // namespace dnnx::cuda
