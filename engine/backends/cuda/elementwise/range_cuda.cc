// Range on CUDA (range_kernels.cu): y[i] = start + i * delta, n fixed by the plan (ops/shape/range.h),
// start and delta read on the device as the kernel runs.
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/elementwise/typed_binary.h"

namespace dnnx::cuda {

namespace {

KernelChoice plan_range(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>&,
                        const std::vector<TensorInfo>& outputs) {
  const ElemType type = typed_element(node, outputs[0].dtype);
  const int64_t n = numel(outputs[0].shape);
  const CudaContext* c = &ctx;
  return make_choice("fill kernel", [=](const KernelArgs& a) {
    launch_range(type, a.in<void>(0), a.in<void>(2), a.out<void>(0), n, c->stream);
  });
}

}  // namespace

void register_cuda_range_kernels(KernelRegistry& r, const CudaContext& ctx) { r.add("Range", bind(ctx, plan_range)); }

}  // namespace dnnx::cuda
