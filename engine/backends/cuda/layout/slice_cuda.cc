// Slice on CUDA, one of the real-world ops of issue #5: the strided gather (gather_kernels.cu)
// from the first element of the slice, any element type.
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "ops/layout/slice.h"

namespace dnnx::cuda {

namespace {

KernelChoice plan_slice(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                        const std::vector<TensorInfo>& outputs) {
  const Shape& x = inputs[0].info.shape;
  const SliceRanges r = slice_ranges(node, inputs, x);
  const std::vector<int64_t> strides = packed_strides(x);
  BroadcastDims dims;
  int64_t base = 0;
  for (size_t d = 0; d < x.size(); ++d) {
    if (r.out[d] == 0) continue;
    base += r.start[d] * strides[d];
    if (r.out[d] == 1) continue;
    if (dims.rank == kMaxGlueDims) {
      node_fail<UnsupportedModelError>(node, "slice of " + shape_str(x) + " has more than " +
                                                 std::to_string(kMaxGlueDims) + " non-unit output dims");
    }
    dims.size[dims.rank] = r.out[d];
    dims.stride_a[dims.rank] = r.step[d] * strides[d];
    ++dims.rank;
  }
  if (dims.rank == 0) {  // one element
    dims.rank = 1;
    dims.size[0] = 1;
    dims.stride_a[0] = 1;
  }
  const size_t elem = dtype_size(inputs[0].info.dtype);
  const int64_t n = numel(outputs[0].shape);
  const CudaContext* c = &ctx;
  return make_choice("gather kernel", [=](const KernelArgs& a) {
    if (n == 0) return;
    launch_gather(a.in<uint8_t>(0) + base * static_cast<int64_t>(elem), a.out<void>(0), elem, n, dims, c->stream);
  });
}

}  // namespace

void register_cuda_slice_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Slice", bind(ctx, plan_slice)).with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda
