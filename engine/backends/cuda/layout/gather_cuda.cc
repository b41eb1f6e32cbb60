// Gather (along one axis) on CUDA, one of the real-world ops of issue #5: an index and copy
// kernel (gather_axis_kernels.cu), any element type, int32 or int64 indices. An index out of
// range gives zeros on CUDA (the CPU raises); the plan says so.
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/layout/glue_kernels.h"

namespace dnnx::cuda {

namespace {

KernelChoice plan_gather(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                         const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;
  const int64_t axis = normalize_axis(node, node.attr_int("axis", 0), static_cast<int64_t>(x.size()));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x[d];
  for (size_t d = static_cast<size_t>(axis) + 1; d < x.size(); ++d) inner *= x[d];
  const int64_t size = x[axis], count = numel(inputs[1].info.shape);
  const bool idx64 = inputs[1].info.dtype == DType::Int64;
  if (!idx64 && inputs[1].info.dtype != DType::Int32) {
    node_fail<UnsupportedModelError>(node, std::string("indices of type ") + dtype_name(inputs[1].info.dtype));
  }
  const size_t elem = dtype_size(inputs[0].info.dtype);
  const CudaContext* c = &ctx;
  KernelChoice choice = make_choice("gather kernel", [=](const KernelArgs& a) {
    launch_gather_axis(a.in<void>(0), a.out<void>(0), elem, a.in<void>(1), idx64, outer, size, count, inner,
                       c->stream);
  });
  choice.rejected.push_back({"range check", "an index out of range gives zeros on CUDA (the CPU raises)"});
  return choice;
}

}  // namespace

void register_cuda_gather_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Gather", bind(ctx, plan_gather)).with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda
