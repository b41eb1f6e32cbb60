// TopK on CUDA (topk_kernels.cu): X float32, float16, bfloat16, int32 or int64, k a value input
// (or opset 1's attribute), axis, largest; the k values of each line in order with their int64
// indices, ties lower index first, as backends/cpu/indexing/indexing_cpu.cc (sorted=0 sorts
// too, as the CPU does). The kernel ranks every element against its whole line: a line longer
// than kMaxDeviceLine runs on the host instead (Note [host fallback]). Forward only: its
// gradient is the CPU's.
#include "backends/cuda/indexing/index_plan.h"

namespace dnnx::cuda {

namespace {

// The longest line the rank kernel takes: its work is up to size^2 comparisons per line.
constexpr int64_t kMaxDeviceLine = int64_t{1} << 16;

KernelChoice plan_topk(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                       const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;
  const DType dtype = inputs[0].info.dtype;
  if (dtype != DType::Int32 && dtype != DType::Int64) require_cuda_floating(node, inputs[0].info, dtype, "X");
  const AxisView v = axis_view(x, normalize_axis(node, node.attr_int("axis", -1), static_cast<int64_t>(x.size())));
  const int64_t k = topk_k(node, inputs);
  const bool largest = node.attr_int("largest", 1) != 0;
  if (v.size > kMaxDeviceLine) {
    node_fail<UnsupportedModelError>(node, "the CUDA kernel takes lines of at most " + std::to_string(kMaxDeviceLine) +
                                               " elements along the axis, not " + std::to_string(v.size));
  }
  const bool with_indices = node.has_output(1);
  const CudaContext* c = &ctx;
  return make_choice("rank kernel", [=](const KernelArgs& a) {
    launch_topk(a.in<void>(0), a.out<void>(0), with_indices ? a.out<int64_t>(1) : nullptr, dtype, v.outer, v.size,
                v.inner, k, largest, c->stream);
  });
}

}  // namespace

void register_cuda_topk_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("TopK", bind(ctx, plan_topk)).with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda
