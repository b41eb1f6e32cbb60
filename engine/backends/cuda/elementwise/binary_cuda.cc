// Add, Sub, Mul, Div (and Sum, Max, Min, Mean pairwise) on CUDA (binary_kernels.cu: float32, float16
// and bfloat16); on int32 and int64, and Mod on any number type, the typed kernels (typed_kernels.cu,
// Div and Mod as ops/elementwise/div_mod.h). The broadcast is analysed once, at plan time, as on the CPU:
// output dims of size 1 are dropped and neighbouring dims that broadcast the same way are merged,
// so a bias [C,1,1] over [N,C,H,W] becomes [N, C, H*W] with B's strides (0, 1, 0). No broadcast
// at all takes the plain elementwise kernel.
#include <cstring>

#include "backends/cuda/elementwise/broadcast_plan.h"
#include "backends/cuda/elementwise/typed_binary.h"
#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "ops/elementwise/binary.h"

namespace dnnx::cuda {

BroadcastDims plan_broadcast(const Node& node, const Shape& a, const Shape& b, const Shape& out) {
  struct Dim {
    int64_t size;
    bool full_a, full_b;
  };
  std::vector<Dim> dims;
  const size_t rank = out.size();
  for (size_t d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    const int64_t da = d < rank - a.size() ? 1 : a[d - (rank - a.size())];
    const int64_t db = d < rank - b.size() ? 1 : b[d - (rank - b.size())];
    const Dim dim{out[d], da == out[d], db == out[d]};
    if (!dims.empty() && dims.back().full_a == dim.full_a && dims.back().full_b == dim.full_b) {
      dims.back().size *= dim.size;
    } else {
      dims.push_back(dim);
    }
  }
  BroadcastDims plan;
  if (dims.empty() || (dims.size() == 1 && dims[0].full_a && dims[0].full_b)) return plan;  // elementwise
  if (dims.size() > static_cast<size_t>(kMaxGlueDims)) {
    node_fail<UnsupportedModelError>(node, "broadcast of " + shape_str(a) + " and " + shape_str(b) +
                                               " needs more than " + std::to_string(kMaxGlueDims) + " dims");
  }
  plan.rank = static_cast<int>(dims.size());
  int64_t step_a = 1, step_b = 1;  // contiguous strides, innermost first
  for (int d = plan.rank - 1; d >= 0; --d) {
    plan.size[d] = dims[d].size;
    plan.stride_a[d] = dims[d].full_a ? step_a : 0;
    plan.stride_b[d] = dims[d].full_b ? step_b : 0;
    if (dims[d].full_a) step_a *= dims[d].size;
    if (dims[d].full_b) step_b *= dims[d].size;
  }
  return plan;
}

namespace {

class BinaryKernel final : public Kernel {
 public:
  BinaryKernel(const CudaContext& ctx, BinaryKind kind, int64_t n, BroadcastDims dims, DType dtype)
      : ctx_(ctx), kind_(kind), n_(n), dims_(dims), dtype_(dtype) {}

  void run(const KernelArgs& args) const override {
    launch_binary(kind_, args.in<void>(0), args.in<void>(1), args.out<void>(0), n_, dims_, dtype_, ctx_.stream);
  }

 private:
  const CudaContext& ctx_;
  BinaryKind kind_;
  int64_t n_;
  BroadcastDims dims_;
  DType dtype_;  // float32, or the half type of half storage (Note [half storage])
};

// The typed kernel's op for an integer Add, Sub, Mul or Div.
TypedBinary typed_op(BinaryKind kind) {
  switch (kind) {
    case BinaryKind::Add: return TypedBinary::Add;
    case BinaryKind::Sub: return TypedBinary::Sub;
    case BinaryKind::Mul: return TypedBinary::Mul;
    default: return TypedBinary::Div;
  }
}

KernelFactory binary_factory(const CudaContext& ctx, BinaryKind kind) {
  return [&ctx, kind](const Node& node, const std::vector<ValueInfo>& inputs,
                      const std::vector<TensorInfo>& outputs) {
    if (is_integer(inputs[0].info.dtype)) return typed_binary_choice(ctx, typed_op(kind), node, inputs, outputs);
    require_cuda_floating(node, inputs[0].info, inputs[0].info.dtype, "inputs");
    const BroadcastDims dims = plan_broadcast(node, inputs[0].info.shape, inputs[1].info.shape, outputs[0].shape);
    KernelChoice choice;
    choice.algorithm = dims.rank == 0 ? "elementwise kernel" : "broadcast kernel";
    choice.kernel = std::make_unique<BinaryKernel>(ctx, kind, numel(outputs[0].shape), dims, inputs[0].info.dtype);
    return choice;
  };
}

// Sum, Max, Min, Mean (float32, or all of one half type; 1 or more inputs) as pairwise binary kernels into Y:
// Y = X0 op X1, then Y = Y op Xi for each further input, each pair with its own broadcast plan
// (Mean: the Sum, then Y = Y / n, n a device scalar of Y's type made at plan time: the CPU's
// order, backends/cpu/elementwise/variadic_cpu.cc). One input is a broadcast copy of it (then
// Y / 1 for Mean). Y never aliases an input (the executor gives it its own buffer).
class VariadicKernel final : public Kernel {
 public:
  // divisor: Mean's n in Y's type on the device (null for Sum, Max, Min); by_divisor its broadcast plan.
  VariadicKernel(const CudaContext& ctx, BinaryKind kind, int64_t n, std::vector<BroadcastDims> steps, BroadcastDims copy,
                 DType dtype, DeviceMemory divisor = {}, BroadcastDims by_divisor = {})
      : ctx_(ctx), kind_(kind), n_(n), steps_(std::move(steps)), copy_(copy), dtype_(dtype),
        divisor_(std::move(divisor)), by_divisor_(by_divisor) {}

  void run(const KernelArgs& args) const override {
    if (n_ == 0) return;
    if (steps_.empty()) {
      launch_gather(args.in<void>(0), args.out<void>(0), dtype_size(dtype_), n_, copy_, ctx_.stream);
    } else {
      launch_binary(kind_, args.in<void>(0), args.in<void>(1), args.out<void>(0), n_, steps_[0], dtype_, ctx_.stream);
      for (size_t i = 1; i < steps_.size(); ++i) {
        launch_binary(kind_, args.out<void>(0), args.in<void>(i + 1), args.out<void>(0), n_, steps_[i], dtype_,
                      ctx_.stream);
      }
    }
    if (divisor_.get()) {
      launch_binary(BinaryKind::Div, args.out<void>(0), divisor_.get(), args.out<void>(0), n_, by_divisor_, dtype_,
                    ctx_.stream);
    }
  }

 private:
  const CudaContext& ctx_;
  BinaryKind kind_;
  int64_t n_;
  std::vector<BroadcastDims> steps_;
  BroadcastDims copy_;
  DType dtype_;
  DeviceMemory divisor_;
  BroadcastDims by_divisor_;
};

// Mean's divisor: `count` as one element of `dtype` (float32 or a half type) on the device.
DeviceMemory device_divisor(const CudaContext& ctx, DType dtype, size_t count) {
  DeviceMemory memory = device_alloc(ctx, 4, "cudaMalloc (Mean's divisor)");
  const float value = static_cast<float>(count);
  uint8_t bytes[4] = {};
  if (dtype == DType::Float32) {
    std::memcpy(bytes, &value, 4);
  } else {
    const uint16_t half = float_to_storage(value, dtype);
    std::memcpy(bytes, &half, 2);
  }
  check(cudaMemcpy(memory.get(), bytes, 4, cudaMemcpyHostToDevice), "cudaMemcpy (Mean's divisor)");
  return memory;
}

// mean: Sum's kernels, then Y / n (Mean).
KernelFactory variadic_factory(const CudaContext& ctx, BinaryKind kind, bool mean = false) {
  return [&ctx, kind, mean](const Node& node, const std::vector<ValueInfo>& inputs,
                            const std::vector<TensorInfo>& outputs) {
    const Shape& out = outputs[0].shape;
    for (const ValueInfo& v : inputs) {
      if (v.info.dtype != inputs[0].info.dtype || !is_floating(v.info.dtype)) {
        node_fail<UnsupportedModelError>(node, std::string("the CUDA kernel takes float32 (or all float16, or all "
                                                           "bfloat16) inputs, not ") +
                                                   dtype_name(v.info.dtype));
      }
    }
    std::vector<BroadcastDims> steps;
    BroadcastDims copy;
    if (inputs.size() == 1) {
      // The copy as a gather: B's strides of a broadcast of X0 against itself are X0's own.
      const BroadcastDims self = plan_broadcast(node, out, inputs[0].info.shape, out);
      if (self.rank == 0) {
        copy.rank = 1;
        copy.size[0] = numel(out);
        copy.stride_a[0] = 1;
      } else {
        copy.rank = self.rank;
        for (int d = 0; d < self.rank; ++d) {
          copy.size[d] = self.size[d];
          copy.stride_a[d] = self.stride_b[d];
        }
      }
    } else {
      steps.push_back(plan_broadcast(node, inputs[0].info.shape, inputs[1].info.shape, out));
      for (size_t i = 2; i < inputs.size(); ++i) steps.push_back(plan_broadcast(node, out, inputs[i].info.shape, out));
    }
    KernelChoice choice;
    choice.algorithm = inputs.size() == 1 ? "copy kernel" : "pairwise binary kernels";
    const DType dtype = inputs[0].info.dtype;
    if (mean) {
      choice.algorithm += ", then a divide kernel";
      choice.kernel = std::make_unique<VariadicKernel>(ctx, kind, numel(out), std::move(steps), copy, dtype,
                                                       device_divisor(ctx, dtype, inputs.size()),
                                                       plan_broadcast(node, out, Shape{}, out));
    } else {
      choice.kernel = std::make_unique<VariadicKernel>(ctx, kind, numel(out), std::move(steps), copy, dtype);
    }
    return choice;
  };
}

}  // namespace

void register_cuda_binary_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Add", binary_factory(ctx, BinaryKind::Add)).with_dtypes(kFloatAndHalves);
  r.add("Sub", binary_factory(ctx, BinaryKind::Sub)).with_dtypes(kFloatAndHalves);
  r.add("Mul", binary_factory(ctx, BinaryKind::Mul)).with_dtypes(kFloatAndHalves);
  r.add("Div", binary_factory(ctx, BinaryKind::Div)).with_dtypes(kFloatAndHalves);
  r.add("Mod", [&ctx](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
    const TypedBinary op = mod_kind(node) == ModKind::Floor ? TypedBinary::ModFloor : TypedBinary::ModFmod;
    return typed_binary_choice(ctx, op, node, inputs, outputs);
  });
  r.add("Sum", variadic_factory(ctx, BinaryKind::Add)).with_dtypes(kFloatAndHalves);
  r.add("Max", variadic_factory(ctx, BinaryKind::Max)).with_dtypes(kFloatAndHalves);
  r.add("Min", variadic_factory(ctx, BinaryKind::Min)).with_dtypes(kFloatAndHalves);
  r.add("Mean", variadic_factory(ctx, BinaryKind::Add, true)).with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda
