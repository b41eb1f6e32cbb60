// Gather (along one axis) on CUDA, one of the real-world ops of issue #5: an index and copy
// kernel (gather_axis_kernels.cu), any element type, int32 or int64 indices. An index out of
// range gives zeros on CUDA (the CPU raises); the plan says so. Its gradient (float32 data; none
// for the indices) sums the dY rows of each index in index order, with no atomics (Note [keyed
// row sums] in train/keyed_row_sums.cu): deterministic, and the CPU's bits.
#include <limits>

#include "backends/cuda/backend/lambda_grad.h"
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/train/keyed_row_sums.h"

namespace dnnx::cuda {

namespace {

// data viewed as [outer, size, inner] (size: the gathered axis), y as [outer, count, inner].
struct GatherDims {
  int64_t outer = 1, size = 0, inner = 1, count = 0;
  bool idx64 = true;
};

GatherDims gather_dims(const Node& node, const std::vector<ValueInfo>& inputs) {
  const Shape& x = inputs[0].info.shape;
  const int64_t axis = normalize_axis(node, node.attr_int("axis", 0), static_cast<int64_t>(x.size()));
  GatherDims g;
  for (int64_t d = 0; d < axis; ++d) g.outer *= x[d];
  for (size_t d = static_cast<size_t>(axis) + 1; d < x.size(); ++d) g.inner *= x[d];
  g.size = x[axis];
  g.count = numel(inputs[1].info.shape);
  g.idx64 = inputs[1].info.dtype == DType::Int64;
  if (!g.idx64 && inputs[1].info.dtype != DType::Int32) {
    node_fail<UnsupportedModelError>(node, std::string("indices of type ") + dtype_name(inputs[1].info.dtype));
  }
  return g;
}

KernelChoice plan_gather(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                         const std::vector<TensorInfo>&) {
  const GatherDims g = gather_dims(node, inputs);
  const size_t elem = dtype_size(inputs[0].info.dtype);
  const CudaContext* c = &ctx;
  KernelChoice choice = make_choice("gather kernel", [=](const KernelArgs& a) {
    launch_gather_axis(a.in<void>(0), a.out<void>(0), elem, a.in<void>(1), g.idx64, g.outer, g.size, g.count,
                       g.inner, c->stream);
  });
  choice.rejected.push_back({"range check", "an index out of range gives zeros on CUDA (the CPU raises)"});
  return choice;
}

GradChoice plan_gather_grad(const GradRequest& r) {
  require_cuda_float(r.node, r.inputs[0].info, "data");
  const GatherDims g = gather_dims(r.node, r.inputs);
  constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
  if (g.size >= kMaxInt || g.count >= kMaxInt) {
    node_fail<UnsupportedModelError>(r.node, "the CUDA gradient takes fewer than 2^31 indices and rows");
  }
  const KeyedRowSumsWorkspace w = keyed_row_sums_workspace(g.count, g.size);
  const CudaContext* c = &cuda_context_of(r);
  return make_grad_choice(
      "zero fill + radix sort of the indices + row sums in index order",
      [=](const GradArgs& a) {
        if (float* dx = a.d_inputs[0]) {
          launch_gather_axis_keys(a.inputs[1], g.idx64, keyed_row_sums_keys(w, a.workspace), g.count, g.size,
                                  c->stream);
          launch_keyed_row_sums(a.d_outputs[0], dx, g.outer, g.size, g.count, g.inner, w, a.workspace, c->stream);
        }
      },
      w.bytes);
}

}  // namespace

void register_cuda_gather_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Gather", bind(ctx, plan_gather)).with_dtypes(kFloatAndHalves).with_gradient(plan_gather_grad);
}

}  // namespace dnnx::cuda
