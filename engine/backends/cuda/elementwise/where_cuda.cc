// Where on CUDA (where_kernels.cu): out = condition ? X : Y over the broadcast of the three.
// Output dims of size 1 are dropped; each operand gets its contiguous stride along the others
// (0 where it broadcasts). More than kMaxGlueDims dims left: refused at plan time.
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/elementwise/typed_binary.h"

namespace dnnx::cuda {

namespace {

// Operand `in`'s stride along each output dim (0 where it broadcasts), full rank.
std::vector<int64_t> operand_strides(const Shape& in, const Shape& out) {
  const size_t rank = out.size(), lead = rank - in.size();
  std::vector<int64_t> strides(rank, 0);
  int64_t step = 1;
  for (size_t d = rank; d-- > lead;) {
    if (in[d - lead] != 1) strides[d] = step;
    step *= in[d - lead];
  }
  return strides;
}

KernelChoice plan_where(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                        const std::vector<TensorInfo>& outputs) {
  const Shape& out = outputs[0].shape;
  typed_element(node, outputs[0].dtype);  // refuses float16
  std::vector<int64_t> strides[3];
  for (int i = 0; i < 3; ++i) strides[i] = operand_strides(inputs[i].info.shape, out);
  WhereDims dims;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;
    if (dims.rank == kMaxGlueDims) {
      node_fail<UnsupportedModelError>(node, "output " + shape_str(out) + " has more than " +
                                                 std::to_string(kMaxGlueDims) + " dims of size > 1");
    }
    dims.size[dims.rank] = out[d];
    for (int i = 0; i < 3; ++i) dims.stride[i][dims.rank] = strides[i][d];
    ++dims.rank;
  }
  const int64_t n = numel(out);
  const size_t elem = dtype_size(outputs[0].dtype);
  const CudaContext* c = &ctx;
  return make_choice("select kernel", [=](const KernelArgs& a) {
    launch_where(a.in<void>(0), a.in<void>(1), a.in<void>(2), a.out<void>(0), elem, n, dims, c->stream);
  });
}

}  // namespace

void register_cuda_where_kernels(KernelRegistry& r, const CudaContext& ctx) { r.add("Where", bind(ctx, plan_where)); }

}  // namespace dnnx::cuda
