// ScatterND on CUDA (indexing_kernels.cu): y = data, then each index tuple's slice replaced by
// (reduction none, any element type) or combined with (add, mul, max, min: float32, float16,
// bfloat16, int32, int64) its slice of updates, as backends/cpu/indexing/indexing_cpu.cc. The
// tuples run in parallel: combinations are atomic, and duplicate tuples without a reduction are
// undefined in ONNX (one of them wins). An index out of range skips its update (Note [device
// index range]).
#include "backends/cuda/indexing/index_plan.h"

namespace dnnx::cuda {

namespace {

KernelChoice plan_scatter_nd(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                             const std::vector<TensorInfo>&) {
  const Shape& data = inputs[0].info.shape;
  const Shape& idx = inputs[1].info.shape;
  const bool idx64 = int64_indices(node, inputs[1].info, "indices");
  const ScatterReduction reduction = scatter_reduction(node);
  const ScatterType type = scatter_type(node, inputs[0].info.dtype, reduction);
  ScatterNDDims g;
  g.k = idx.back();
  if (g.k > kMaxIndexDims) {
    node_fail<UnsupportedModelError>(node, "the CUDA kernel takes index tuples of at most " +
                                               std::to_string(kMaxIndexDims) + " values, not " + std::to_string(g.k));
  }
  g.tuples = numel(Shape(idx.begin(), idx.end() - 1));
  g.slice = numel(Shape(data.begin() + g.k, data.end()));
  const std::vector<int64_t> strides = packed_strides(data);
  for (int64_t j = 0; j < g.k; ++j) {
    g.size[j] = data[j];
    g.stride[j] = strides[j];
  }
  const size_t elem = dtype_size(inputs[0].info.dtype);
  const size_t bytes = static_cast<size_t>(numel(data)) * elem;
  const CudaContext* c = &ctx;
  KernelChoice choice =
      make_choice(reduction == ScatterReduction::None ? "copy+scatter kernel" : "copy+atomic scatter kernel",
                  [=](const KernelArgs& a) {
                    copy_data(a.in<void>(0), a.out<void>(0), bytes, c->stream);
                    launch_scatter_nd(a.in<void>(1), idx64, a.in<void>(2), a.out<void>(0), elem, type, reduction, g,
                                      c->stream);
                  });
  note_index_range(choice, true);
  return choice;
}

}  // namespace

void register_cuda_scatter_nd_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("ScatterND", bind(ctx, plan_scatter_nd)).with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda
