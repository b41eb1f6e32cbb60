// "Gemm+Softmax" (the fuse_gemm_softmax pass: a Gemm whose rows a Softmax normalises) on CUDA,
// two ways:
//   fused  the dense rows kernel (gemm_dense_rows.h) with the softmax in its epilogue: one
//          launch; fp32 storage, up to kDenseSoftmaxMaxCols columns;
//   pair   the Gemm's own kernel (gemm_cuda.cc) into a buffer in the workspace, then the
//          Softmax's (softmax_cuda.cc): what the unfused graph runs.
// Both planner policies take the fused kernel while every row group's re-read of B stays within
// kDenseMaxBReads elements (dense_rows.h) (LeNet's fc2 + softmax: 5,000 at batch 1, 1.3 million at batch 1024);
// a classifier over thousands of classes with a wide input keeps the pair, whose GEMM tiles
// B once per output tile.
#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/dense/gemm_dense_rows.h"
#include "backends/cuda/runtime/kernel_pair.h"

namespace dnnx::cuda {

namespace {

constexpr const char* kInner = "gemm_softmax.inner";  // the pair's Gemm output: never a tensor of the model

KernelChoice plan_pair(const KernelRegistry& registry, const Node& node, const std::vector<ValueInfo>& inputs,
                       const std::vector<TensorInfo>& outputs) {
  Node gemm = node;
  gemm.op_type = "Gemm";
  gemm.outputs = {kInner};
  Node softmax;
  softmax.name = node.name;
  softmax.op_type = "Softmax";
  softmax.inputs = {kInner};
  softmax.outputs = node.outputs;
  softmax.opset = node.opset;  // no axis: each opset's default is the last axis of a 2-D input
  KernelChoice first = (*registry.find("Gemm"))(gemm, inputs, outputs);
  ValueInfo inner;
  inner.info = outputs[0];
  KernelChoice second = (*registry.find("Softmax"))(softmax, {inner}, outputs);
  KernelChoice pair;
  pair.algorithm = first.algorithm + ", then " + second.algorithm;
  pair.math = first.math;
  set_pair_buffers(pair, outputs[0].bytes(), first.workspace_bytes, second.workspace_bytes);
  pair.rejected = std::move(first.rejected);
  for (Rejected& r : second.rejected) pair.rejected.push_back(std::move(r));
  pair.kernel = std::make_unique<KernelPair>(std::move(first.kernel), std::move(second.kernel), outputs[0].bytes());
  return pair;
}

KernelChoice plan_gemm_softmax(const KernelRegistry& registry, const CudaContext& ctx, const Node& node,
                               const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  DenseRows shape;
  std::string why_not;
  std::unique_ptr<Kernel> fused = plan_dense_rows(ctx, node, inputs, outputs[0], DenseEpilogue::Softmax, shape, why_not);
  if (fused && shape.b_reads() > kDenseMaxBReads) {
    why_not = "its row groups would read B " + std::to_string(static_cast<long long>(shape.b_reads())) +
              " elements, over the bound of 2^24";
    fused.reset();
  }
  KernelChoice pair = plan_pair(registry, node, inputs, outputs);
  if (!fused) {
    pair.rejected.push_back({kDenseRowsName, why_not});
    return pair;
  }
  const bool has_c = inputs.size() > 2 && inputs[2].present && shape.beta != 0.0f;
  KernelChoice choice;
  choice.kernel = std::move(fused);
  choice.algorithm = std::string(kDenseRowsName) + (has_c ? " (bias+softmax fused)" : " (softmax fused)");
  choice.candidate = kDenseRowsName;
  choice.math = kDenseRowsMath;
  choice.rejected = {{"the Gemm+Softmax pair: " + pair.algorithm, "one launch in place of two for a small layer"}};
  return choice;
}

}  // namespace

void register_cuda_gemm_softmax_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Gemm+Softmax", [&r, &ctx](const Node& node, const std::vector<ValueInfo>& inputs,
                                   const std::vector<TensorInfo>& outputs) {
    return plan_gemm_softmax(r, ctx, node, inputs, outputs);
  }).with_dtypes(kFloatAndHalves);  // the pair in half (the fused kernel is fp32 only)
}

}  // namespace dnnx::cuda
