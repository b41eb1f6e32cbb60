// Slice on CUDA, one of the real-world ops of issue #5: the strided gather (gather_kernels.cu)
// from the first element of the slice, any element type. Its gradient (float32): dX zeroed, then
// dY scattered back along the same walk (train/grad_kernels.h).
#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/backend/lambda_grad.h"
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/train/grad_kernels.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "ops/layout/slice.h"

namespace dnnx::cuda {

namespace {

// Where the slice lies in X: its first element's offset and the output dims with X's strides
// (size-1 dims dropped; a single element is one dim of 1).
struct SliceWalk {
  int64_t base = 0;
  BroadcastDims dims;
};

SliceWalk slice_walk(const Node& node, const std::vector<ValueInfo>& inputs) {
  const Shape& x = inputs[0].info.shape;
  const SliceRanges r = slice_ranges(node, inputs, x);
  const std::vector<int64_t> strides = packed_strides(x);
  SliceWalk w;
  for (size_t d = 0; d < x.size(); ++d) {
    if (r.out[d] == 0) continue;
    w.base += r.start[d] * strides[d];
    if (r.out[d] == 1) continue;
    if (w.dims.rank == kMaxGlueDims) {
      node_fail<UnsupportedModelError>(node, "slice of " + shape_str(x) + " has more than " +
                                                 std::to_string(kMaxGlueDims) + " non-unit output dims");
    }
    w.dims.size[w.dims.rank] = r.out[d];
    w.dims.stride_a[w.dims.rank] = r.step[d] * strides[d];
    ++w.dims.rank;
  }
  if (w.dims.rank == 0) {  // one element
    w.dims.rank = 1;
    w.dims.size[0] = 1;
    w.dims.stride_a[0] = 1;
  }
  return w;
}

KernelChoice plan_slice(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                        const std::vector<TensorInfo>& outputs) {
  const SliceWalk w = slice_walk(node, inputs);
  const size_t elem = dtype_size(inputs[0].info.dtype);
  const int64_t n = numel(outputs[0].shape);
  const CudaContext* c = &ctx;
  return make_choice("gather kernel", [=](const KernelArgs& a) {
    if (n == 0) return;
    launch_gather(a.in<uint8_t>(0) + w.base * static_cast<int64_t>(elem), a.out<void>(0), elem, n, w.dims, c->stream);
  });
}

// dX: zeros, then dY scattered to the slice's positions (each written once: deterministic).
GradChoice plan_slice_grad(const GradRequest& r) {
  const CudaContext* c = &cuda_context_of(r);
  const SliceWalk w = slice_walk(r.node, r.inputs);
  const int64_t n = numel(r.outputs[0].shape);
  const size_t x_bytes = static_cast<size_t>(numel(r.inputs[0].info.shape)) * sizeof(float);
  return make_grad_choice("zero fill + scatter kernel", [=](const GradArgs& a) {
    float* dx = a.d_inputs[0];
    if (!dx) return;
    if (x_bytes) check(cudaMemsetAsync(dx, 0, x_bytes, c->stream), "cudaMemsetAsync");
    launch_strided_scatter(a.d_outputs[0], dx + w.base, n, w.dims, c->stream);
  });
}

}  // namespace

void register_cuda_slice_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Slice", bind(ctx, plan_slice)).with_dtypes(kFloatAndHalves).with_gradient(plan_slice_grad);
}

}  // namespace dnnx::cuda
