// GatherElements on CUDA (indexing_kernels.cu): any element type, int32 or int64 indices of
// data's rank, y[p] = data[p with p[axis] = indices[p]], as backends/cpu/indexing/
// indexing_cpu.cc. An index out of range reads zeros (Note [device index range]). Forward only:
// its gradient is the CPU's.
#include "backends/cuda/indexing/index_plan.h"

namespace dnnx::cuda {

namespace {

KernelChoice plan_gather_elements(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                                  const std::vector<TensorInfo>&) {
  const Shape& data = inputs[0].info.shape;
  const bool idx64 = int64_indices(node, inputs[1].info, "indices");
  const int64_t axis = normalize_axis(node, node.attr_int("axis", 0), static_cast<int64_t>(data.size()));
  const ElementsDims g = elements_dims(node, data, inputs[1].info.shape, axis);
  const size_t elem = dtype_size(inputs[0].info.dtype);
  const CudaContext* c = &ctx;
  KernelChoice choice = make_choice("gather kernel", [=](const KernelArgs& a) {
    launch_gather_elements(a.in<void>(0), a.in<void>(1), idx64, a.out<void>(0), elem, g, c->stream);
  });
  note_index_range(choice, false);
  return choice;
}

}  // namespace

void register_cuda_gather_elements_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("GatherElements", bind(ctx, plan_gather_elements)).with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda
