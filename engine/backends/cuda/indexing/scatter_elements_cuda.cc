// ScatterElements (and Scatter, its deprecated name) on CUDA (indexing_kernels.cu): y = data,
// then for each position p of indices y[p with p[axis] = indices[p]] replaced by (reduction
// none, any element type) or combined with (add, mul, max, min: float32, float16, bfloat16,
// int32, int64) updates[p], as backends/cpu/indexing/scatter_elements_cpu.cc. The positions run
// in parallel: combinations are atomic, and duplicate indices without a reduction are undefined
// in ONNX (one of them wins; the CPU's last). A negative index counts from the end of the axis;
// one out of range skips its update (Note [device index range]).
#include "backends/cuda/indexing/index_plan.h"

namespace dnnx::cuda {

namespace {

KernelChoice plan_scatter_elements(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                                   const std::vector<TensorInfo>&) {
  const Shape& data = inputs[0].info.shape;
  const bool idx64 = int64_indices(node, inputs[1].info, "indices");
  const ScatterReduction reduction = node.op_type == "Scatter" ? ScatterReduction::None : scatter_reduction(node);
  const ScatterType type = scatter_type(node, inputs[0].info.dtype, reduction);
  const int64_t axis = normalize_axis(node, node.attr_int("axis", 0), static_cast<int64_t>(data.size()));
  const ElementsDims g = elements_dims(node, data, inputs[1].info.shape, axis);
  const size_t elem = dtype_size(inputs[0].info.dtype);
  const size_t bytes = static_cast<size_t>(numel(data)) * elem;
  const CudaContext* c = &ctx;
  KernelChoice choice =
      make_choice(reduction == ScatterReduction::None ? "copy+scatter kernel" : "copy+atomic scatter kernel",
                  [=](const KernelArgs& a) {
                    copy_data(a.in<void>(0), a.out<void>(0), bytes, c->stream);
                    launch_scatter_elements(a.in<void>(1), idx64, a.in<void>(2), a.out<void>(0), elem, type, reduction,
                                            g, c->stream);
                  });
  note_index_range(choice, true);
  return choice;
}

}  // namespace

void register_cuda_scatter_elements_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("ScatterElements", bind(ctx, plan_scatter_elements)).with_dtypes(kFloatAndHalves);
  r.add("Scatter", bind(ctx, plan_scatter_elements)).with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda
