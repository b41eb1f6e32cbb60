// The host half of the typed elementwise kernels (typed_elementwise.h), shared by the files that
// register them (binary_cuda.cc for integer arithmetic and Mod, compare_cuda.cc, logical_cuda.cc,
// activation_cuda.cc for integer Neg and Abs): the element type of a node's values and the
// broadcasting binary kernel. Inline, one copy for all of them.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/elementwise/broadcast_plan.h"
#include "backends/cuda/elementwise/typed_elementwise.h"

namespace dnnx::cuda {

// The kernels' element type of `t`; float16 and bfloat16 are refused (UnsupportedModelError
// naming the node): these kernels store no halves, and their registrations say so (no
// with_dtypes(kFloatAndHalves)).
inline ElemType typed_element(const Node& node, DType t) {
  switch (t) {
    case DType::Float32: return ElemType::Float32;
    case DType::Int32: return ElemType::Int32;
    case DType::Int64: return ElemType::Int64;
    case DType::Bool: return ElemType::Bool;
    default: break;  // the halves; no other type reaches a CUDA kernel (CudaBackend::plan_node)
  }
  node_fail<UnsupportedModelError>(node, std::string("the CUDA kernel takes float32, int32, int64 or bool, not ") +
                                             dtype_name(t));
}

class TypedBinaryKernel final : public Kernel {
 public:
  TypedBinaryKernel(const CudaContext& ctx, TypedBinary op, ElemType in, int64_t n, BroadcastDims dims)
      : ctx_(ctx), op_(op), in_(in), n_(n), dims_(dims) {}
  void run(const KernelArgs& args) const override {
    launch_typed_binary(op_, in_, args.in<void>(0), args.in<void>(1), args.out<void>(0), n_, dims_, ctx_.stream);
  }

 private:
  const CudaContext& ctx_;
  TypedBinary op_;
  ElemType in_;
  int64_t n_;
  BroadcastDims dims_;
};

// The typed binary kernel for a node A op B -> Y (types checked by the op's inference).
inline KernelChoice typed_binary_choice(const CudaContext& ctx, TypedBinary op, const Node& node,
                                        const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  const ElemType in = typed_element(node, inputs[0].info.dtype);
  const BroadcastDims dims = plan_broadcast(node, inputs[0].info.shape, inputs[1].info.shape, outputs[0].shape);
  KernelChoice choice;
  choice.algorithm = dims.rank == 0 ? "typed elementwise kernel" : "typed broadcast kernel";
  choice.kernel = std::make_unique<TypedBinaryKernel>(ctx, op, in, numel(outputs[0].shape), dims);
  return choice;
}

// The registry's factory for one typed binary op.
inline KernelFactory typed_binary_factory(const CudaContext& ctx, TypedBinary op) {
  return [&ctx, op](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
    return typed_binary_choice(ctx, op, node, inputs, outputs);
  };
}

}  // namespace dnnx::cuda
