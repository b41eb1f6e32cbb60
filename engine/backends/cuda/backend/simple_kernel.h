// The small host-side helpers shared by the CUDA files whose kernels are one lambda over the
// call's buffers (the plan_* factories of BatchNormalization, LeakyRelu / Elu / Clip,
// AveragePool, GlobalAverage/MaxPool, LRN, ReduceMean, Pad, Slice, Expand, Split, Gather and
// Cast): the element type checks, the lambda kernel and its KernelChoice, packed strides, and
// the binding of a plan function to the model's CudaContext. Inline, one copy for all of them.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/backend/cuda_kernels.h"

namespace dnnx::cuda {

// A kernel factory as the registry takes it (the shape of KernelFactory), for the families
// that build their factory from parameters (alpha_factory, global_pool_factory).
using Factory = std::function<KernelChoice(const Node&, const std::vector<ValueInfo>&, const std::vector<TensorInfo>&)>;

// Refuses `t` (UnsupportedModelError naming the node) unless it is float32; `what` names it.
inline void require_cuda_float(const Node& node, const TensorInfo& t, const char* what) {
  if (t.dtype != DType::Float32) {
    node_fail<UnsupportedModelError>(node, std::string("the CUDA kernel takes float32 ") + what + ", not " +
                                               dtype_name(t.dtype));
  }
}

// float32, or a half type (float16 with precision="fp16", bfloat16 with "bf16") that is
// `expected` (the node's first input's type: the half_storage pass gives every float input of a
// half node the one half type).
inline void require_cuda_floating(const Node& node, const TensorInfo& t, DType expected, const char* what) {
  if (!is_half(t.dtype)) {
    require_cuda_float(node, t, what);
  } else if (expected != t.dtype) {
    node_fail<UnsupportedModelError>(node, std::string("the CUDA kernel takes ") + what + " of one float type, not " +
                                               dtype_name(t.dtype) + " with " + dtype_name(expected));
  }
}

// A kernel that is one lambda over the call's buffers.
class LambdaKernel final : public Kernel {
 public:
  explicit LambdaKernel(std::function<void(const KernelArgs&)> body) : body_(std::move(body)) {}
  void run(const KernelArgs& args) const override { body_(args); }

 private:
  std::function<void(const KernelArgs&)> body_;
};

// The KernelChoice named `algorithm` whose kernel is a LambdaKernel running `body`.
inline KernelChoice make_choice(const char* algorithm, std::function<void(const KernelArgs&)> body) {
  KernelChoice choice;
  choice.algorithm = algorithm;
  choice.kernel = std::make_unique<LambdaKernel>(std::move(body));
  return choice;
}

// The registry's factory for plan(ctx, node, inputs, outputs): `ctx` is kept by reference (the
// model's CudaContext outlives its kernels).
template <class Plan>
KernelFactory bind(const CudaContext& ctx, Plan plan) {
  return [&ctx, plan](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
    return plan(ctx, node, inputs, outputs);
  };
}

}  // namespace dnnx::cuda
