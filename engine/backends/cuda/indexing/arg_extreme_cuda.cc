// ArgMax and ArgMin on CUDA (arg_extreme_kernels.cu): X float32, float16, bfloat16, int32 or
// int64 (other types on the host, Note [host fallback]), axis, keepdims, select_last_index; int64
// indices, the CPU's answer (backends/cpu/indexing/indexing_cpu.cc) for ties and NaN. No gradient
// (an index has none).
#include "backends/cuda/indexing/index_plan.h"

namespace dnnx::cuda {

namespace {

KernelChoice plan_arg_extreme(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                              const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;
  const DType dtype = inputs[0].info.dtype;
  if (dtype != DType::Int32 && dtype != DType::Int64) require_cuda_floating(node, inputs[0].info, dtype, "X");
  const AxisView v = axis_view(x, normalize_axis(node, node.attr_int("axis", 0), static_cast<int64_t>(x.size())));
  const bool max = node.op_type == "ArgMax";
  const bool last = node.attr_int("select_last_index", 0) != 0;
  const CudaContext* c = &ctx;
  return make_choice(arg_extreme_by_warp(v.size, v.inner) ? "line scan kernel, a warp per line" : "line scan kernel",
                     [=](const KernelArgs& a) {
                       launch_arg_extreme(a.in<void>(0), a.out<int64_t>(0), dtype, v.outer, v.size, v.inner, max, last,
                                          c->stream);
                     });
}

}  // namespace

void register_cuda_arg_extreme_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("ArgMax", bind(ctx, plan_arg_extreme)).with_dtypes(kFloatAndHalves);
  r.add("ArgMin", bind(ctx, plan_arg_extreme)).with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda
