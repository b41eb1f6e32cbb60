// Where on CUDA (where_kernels.cu): out = condition ? X : Y over the broadcast of the three, X
// and Y of any device type (float32, float16, bfloat16, int32, int64, bool: the kernel moves
// values by their size). Output dims of size 1 are dropped; each operand gets its contiguous
// stride along the others (0 where it broadcasts), and neighbouring dims that every operand walks
// contiguously (or broadcasts along both) are merged. More than kMaxGlueDims dims left: refused
// at plan time (the node runs on the host, Note [host fallback]).
#include <array>

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
  const size_t elem = dtype_size(outputs[0].dtype);
  if (elem != 1 && elem != 2 && elem != 4 && elem != 8) {
    node_fail<UnsupportedModelError>(node, std::string("the CUDA kernel has no ") + dtype_name(outputs[0].dtype) +
                                               " form");
  }
  std::vector<int64_t> strides[3];
  for (int i = 0; i < 3; ++i) strides[i] = operand_strides(inputs[i].info.shape, out);
  // The dims of size > 1, outermost first, each merged into the one before it where every
  // operand's stride there is its stride here times this dim's size.
  std::vector<int64_t> sizes;
  std::vector<std::array<int64_t, 3>> steps;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;
    const std::array<int64_t, 3> step = {strides[0][d], strides[1][d], strides[2][d]};
    bool merge = !sizes.empty();
    for (int i = 0; merge && i < 3; ++i) merge = steps.back()[i] == step[i] * out[d];
    if (merge) {
      sizes.back() *= out[d];
      steps.back() = step;
    } else {
      sizes.push_back(out[d]);
      steps.push_back(step);
    }
  }
  if (sizes.size() > static_cast<size_t>(kMaxGlueDims)) {
    node_fail<UnsupportedModelError>(node, "output " + shape_str(out) + " has more than " +
                                               std::to_string(kMaxGlueDims) + " dims the kernel cannot merge");
  }
  WhereDims dims;
  for (size_t d = 0; d < sizes.size(); ++d) {
    dims.size[dims.rank] = sizes[d];
    for (int i = 0; i < 3; ++i) dims.stride[i][dims.rank] = steps[d][i];
    ++dims.rank;
  }
  const int64_t n = numel(out);
  const CudaContext* c = &ctx;
  return make_choice("select kernel", [=](const KernelArgs& a) {
    launch_where(a.in<void>(0), a.in<void>(1), a.in<void>(2), a.out<void>(0), elem, n, dims, c->stream);
  });
}

}  // namespace

void register_cuda_where_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Where", bind(ctx, plan_where)).with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda
