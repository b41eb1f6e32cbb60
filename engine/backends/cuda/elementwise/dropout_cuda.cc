// Dropout's mask at inference on CUDA (as backends/cpu/elementwise/dropout_cpu.cc): output 0 is a view of X,
// and this kernel, run beside the view (Note [views with more outputs] in runtime/planner.cc),
// fills only the mask: all true (bool, opset 10 on), or all ones of X's type before.
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/runtime/cuda_check.h"

namespace dnnx::cuda {

namespace {

constexpr size_t kMask = 1;
constexpr int kTrueByte = 1;
constexpr uint64_t kFloatOne = 0x3f800000u;

KernelChoice plan_dropout(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>&,
                          const std::vector<TensorInfo>& outputs) {
  if (!node.has_output(kMask)) node_fail<UnsupportedModelError>(node, "a Dropout without a mask is a view: no kernel");
  const TensorInfo& mask = outputs[kMask];
  const int64_t n = numel(mask.shape);
  const CudaContext* c = &ctx;
  if (mask.dtype == DType::Bool) {  // one byte per element: a memset
    return make_choice("mask fill (all kept)", [=](const KernelArgs& a) {
      check(cudaMemsetAsync(a.out<void>(kMask), kTrueByte, static_cast<size_t>(n), c->stream),
            "cudaMemsetAsync (Dropout mask)");
    });
  }
  // A mask of X's type (before opset 10): float32 ones; a float16 one runs on the host.
  require_cuda_float(node, mask, "mask (a float16 mask runs on the host)");
  return make_choice("mask fill (all kept)", [=](const KernelArgs& a) {
    launch_fill(a.out<void>(kMask), sizeof(float), n, nullptr, kFloatOne, c->stream);
  });
}

}  // namespace

void register_cuda_dropout_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Dropout", bind(ctx, plan_dropout));
}

}  // namespace dnnx::cuda
