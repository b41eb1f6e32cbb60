// GatherND on CUDA (indexing_kernels.cu): any element type, int32 or int64 indices, batch_dims,
// the geometry of ops/indexing/gather_nd.h (as backends/cpu/indexing/gather_nd_cpu.cc). An index
// out of range reads zeros (Note [device index range]). The gradient (float32): dData zeroed, then
// each dY slice added into the slice it was read from, repeated tuples in tuple order, with no
// atomics (train/keyed_row_sums.h).
#include <limits>

#include "backends/cuda/backend/lambda_grad.h"
#include "backends/cuda/indexing/index_plan.h"
#include "backends/cuda/train/keyed_row_sums.h"
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

// dData: the tuples' dY slices summed into the slices they read, in tuple order, with no atomics
// (Note [keyed row sums] in train/keyed_row_sums.cu): data as rows of `slice` elements.
GradChoice plan_gather_nd_grad(const GradRequest& r) {
  require_cuda_float(r.node, r.inputs[0].info, "data");
  const GatherNDDims g = gather_nd_dims(r.node, r.inputs);
  const bool idx64 = int64_indices(r.node, r.inputs[1].info, "indices");
  const int64_t rows = g.slice > 0 ? g.batches * g.batch_stride / g.slice : 0, count = g.batches * g.tuples;
  constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
  if (rows >= kMaxInt || count >= kMaxInt) {
    node_fail<UnsupportedModelError>(r.node, "the CUDA gradient takes fewer than 2^31 index tuples and slices");
  }
  const KeyedRowSumsWorkspace w = keyed_row_sums_workspace(count, rows);
  const CudaContext* c = &cuda_context_of(r);
  const size_t dx_bytes = static_cast<size_t>(g.batches * g.batch_stride) * sizeof(float);
  return make_grad_choice(
      "radix sort of the slices + slice sums in tuple order",
      [=](const GradArgs& a) {
        float* dx = a.d_inputs[0];
        if (!dx) return;
        if (g.slice == 0) {  // empty slices: nothing to add
          if (dx_bytes) check(cudaMemsetAsync(dx, 0, dx_bytes, c->stream), "cudaMemsetAsync");
          return;
        }
        launch_gather_nd_keys(a.inputs[1], idx64, keyed_row_sums_keys(w, a.workspace), g, c->stream);
        launch_keyed_row_sums(a.d_outputs[0], dx, 1, rows, count, g.slice, w, a.workspace, c->stream);
      },
      w.bytes);
}

}  // namespace

void register_cuda_gather_nd_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("GatherND", bind(ctx, plan_gather_nd)).with_dtypes(kFloatAndHalves).with_gradient(plan_gather_nd_grad);
}

}  // namespace dnnx::cuda
