// Not, And, Or, Xor on CUDA, on bool, through the typed kernels (typed_kernels.cu).
#include "backends/cuda/elementwise/typed_binary.h"
#include "backends/cuda/backend/simple_kernel.h"

namespace dnnx::cuda {

namespace {

KernelChoice plan_not(const CudaContext& ctx, const Node&, const std::vector<ValueInfo>& inputs,
                      const std::vector<TensorInfo>&) {
  const int64_t n = numel(inputs[0].info.shape);
  const CudaContext* c = &ctx;
  return make_choice("typed elementwise kernel", [=](const KernelArgs& a) {
    launch_typed_unary(TypedUnary::Not, ElemType::Bool, a.in<void>(0), a.out<void>(0), n, c->stream);
  });
}

}  // namespace

void register_cuda_logical_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Not", bind(ctx, plan_not)).with_dtypes({});
  r.add("And", typed_binary_factory(ctx, TypedBinary::And)).with_dtypes({});
  r.add("Or", typed_binary_factory(ctx, TypedBinary::Or)).with_dtypes({});
  r.add("Xor", typed_binary_factory(ctx, TypedBinary::Xor)).with_dtypes({});
}

}  // namespace dnnx::cuda
