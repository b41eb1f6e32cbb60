// The Reduce* ops on CUDA: one thread per output element over the reduced dims, a block where it
// has many (reduce_kernels.cu, Note [reduce by block]), forward and gradient. ReduceMean stores float32, float16 or
// bfloat16 (half storage); ReduceSum, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
// ReduceSumSquare, ReduceLogSum and ReduceLogSumExp float32 (integers on the host). Every
// gradient is one launch, each cell writing its own elements of dX (the CPU's rules:
// backends/cpu/reduce/reduce_cpu.cc). More than kMaxGlueDims non-unit dims on one side of the reduction
// is refused at plan time with an UnsupportedModelError naming the node.
#include "backends/cuda/backend/lambda_grad.h"
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/elementwise/reduce_grad_cuda.h"
#include "backends/cuda/elementwise/reduce_kernels.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "ops/reduce/reduce.h"

namespace dnnx::cuda {

namespace {

// Where each output cell and each of its elements lies in X.
struct ReduceLayout {
  BroadcastDims out, red;
  int64_t count = 1;  // elements per cell
  int64_t cells = 0;
};

// X [shape] reduced over the dims flagged in `reduced`; `node` names the refusal.
ReduceLayout reduce_layout(const Node& node, const Shape& x, const std::vector<bool>& reduced) {
  const std::vector<int64_t> strides = packed_strides(x);
  ReduceLayout l;
  l.cells = 1;
  for (size_t d = 0; d < x.size(); ++d) {
    if (!reduced[d]) l.cells *= x[d];
    if (x[d] == 1) continue;
    BroadcastDims& dims = reduced[d] ? l.red : l.out;
    if (dims.rank == kMaxGlueDims) {
      node_fail<UnsupportedModelError>(node, "X " + shape_str(x) + " has more than " + std::to_string(kMaxGlueDims) +
                                                 " non-unit dims on one side of the reduction");
    }
    dims.size[dims.rank] = x[d];
    dims.stride_a[dims.rank] = strides[d];
    ++dims.rank;
    if (reduced[d]) l.count *= x[d];
  }
  return l;
}

ReduceLayout reduce_layout(const Node& node, const std::vector<ValueInfo>& inputs) {
  const Shape& x = inputs[0].info.shape;
  return reduce_layout(node, x, reduce_axes(node, inputs, x).reduced);
}

const char* reduce_algorithm(const ReduceLayout& l) {
  return reduce_by_block(l.count) ? "direct kernel, a block per cell" : "direct kernel";
}

KernelChoice plan_reduce(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                         const std::vector<TensorInfo>&) {
  const ReduceKind kind = reduce_kind(node.op_type);
  const DType dtype = inputs[0].info.dtype;
  if (kind == ReduceKind::Mean) {
    require_cuda_floating(node, inputs[0].info, inputs[0].info.dtype, "X");
  } else {
    require_cuda_float(node, inputs[0].info, "X");
  }
  const ReduceLayout l = reduce_layout(node, inputs);
  const CudaContext* c = &ctx;
  if (kind == ReduceKind::Mean) {
    return make_choice(reduce_algorithm(l), [=](const KernelArgs& a) {
      launch_reduce_mean(a.in<void>(0), a.out<void>(0), l.cells, l.out, l.red, l.count, dtype, c->stream);
    });
  }
  return make_choice(reduce_algorithm(l), [=](const KernelArgs& a) {
    launch_reduce(kind, a.in(0), a.out(0), l.cells, l.out, l.red, l.count, c->stream);
  });
}

GradChoice plan_reduce_grad(const GradRequest& r) {
  const Shape& x = r.inputs[0].info.shape;
  return plan_reduction_grad(r, reduce_kind(r.node.op_type), reduce_axes(r.node, r.inputs, x).reduced);
}

}  // namespace

GradChoice plan_reduction_grad(const GradRequest& r, ReduceKind kind, const std::vector<bool>& reduced) {
  const CudaContext* c = &cuda_context_of(r);
  const ReduceLayout l = reduce_layout(r.node, r.inputs[0].info.shape, reduced);
  return make_grad_choice("direct kernel", [=](const GradArgs& a) {
    if (!a.d_inputs[0]) return;
    launch_reduce_grad(kind, a.in(0), a.out(0), a.d_outputs[0], a.d_inputs[0], l.cells, l.out, l.red, l.count,
                       c->stream);
  });
}

void register_cuda_reduce_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("ReduceMean", bind(ctx, plan_reduce)).with_dtypes(kFloatAndHalves).with_gradient(plan_reduce_grad);
  for (const char* op : {"ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2", "ReduceL1", "ReduceSumSquare",
                         "ReduceLogSum", "ReduceLogSumExp"}) {
    r.add(op, bind(ctx, plan_reduce)).with_gradient(plan_reduce_grad);
  }
}

}  // namespace dnnx::cuda
