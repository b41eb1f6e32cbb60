// Where on CUDA (where_kernels.cu): out = condition ? X : Y over the broadcast of the three, X
// and Y of any device type (float32, float16, bfloat16, int32, int64, bool: the kernel moves
// values by their size). Output dims of size 1 are dropped; each operand gets its contiguous
// stride along the others (0 where it broadcasts), and neighbouring dims that every operand walks
// contiguously (or broadcasts along both) are merged. More than kMaxGlueDims dims left: refused
// at plan time (the node runs on the host, Note [host fallback]). Its gradient (float32 X and Y;
// none for the condition) is the CPU's (where_cpu.cc): plan_where_grad.
#include <array>

#include "backends/cuda/backend/lambda_grad.h"
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/elementwise/side_reduction.h"
#include "backends/cuda/elementwise/typed_binary.h"
#include "backends/cuda/train/grad_kernels.h"

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

// The select kernel's walk of the output `out` with each operand's strides (cond, x, y): the
// dims of size > 1, outermost first, each merged into the one before it where every operand's
// stride there is its stride here times this dim's size.
WhereDims where_dims(const Node& node, const Shape& cond, const Shape& x, const Shape& y, const Shape& out) {
  const std::vector<int64_t> strides[3] = {operand_strides(cond, out), operand_strides(x, out),
                                           operand_strides(y, out)};
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
  return dims;
}

KernelChoice plan_where(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                        const std::vector<TensorInfo>& outputs) {
  const Shape& out = outputs[0].shape;
  const size_t elem = dtype_size(outputs[0].dtype);
  if (elem != 1 && elem != 2 && elem != 4 && elem != 8) {
    node_fail<UnsupportedModelError>(node, std::string("the CUDA kernel has no ") + dtype_name(outputs[0].dtype) +
                                               " form");
  }
  const WhereDims dims =
      where_dims(node, inputs[0].info.shape, inputs[1].info.shape, inputs[2].info.shape, out);
  const int64_t n = numel(out);
  const CudaContext* c = &ctx;
  return make_choice("select kernel", [=](const KernelArgs& a) {
    launch_where(a.in<void>(0), a.in<void>(1), a.in<void>(2), a.out<void>(0), elem, n, dims, c->stream);
  });
}

// dX = dY where the condition holds, dY's other elements to Y, each summed over the dims its
// side was broadcast along. The mask is the forward's select kernel over (cond, dY, 0) or
// (cond, 0, dY), a zero float at the workspace's end standing for the broadcast 0; the sums are
// the binary ops' reduce-sum kernel (deterministic). Workspace: the masked dY, then the zero.
GradChoice plan_where_grad(const GradRequest& r) {
  const Shape& out = r.outputs[0].shape;
  const Shape& cond = r.inputs[0].info.shape;
  for (int side = 1; side <= 2; ++side) require_cuda_float(r.node, r.inputs[side].info, side == 1 ? "X" : "Y");
  const WhereDims keep_x = where_dims(r.node, cond, out, Shape{}, out);  // (cond, dY, 0)
  const WhereDims keep_y = where_dims(r.node, cond, Shape{}, out, out);  // (cond, 0, dY)
  const SideReduction to_x = plan_reduction(r.node, r.inputs[1].info.shape, out);
  const SideReduction to_y = plan_reduction(r.node, r.inputs[2].info.shape, out);
  const int64_t n = numel(out);
  const CudaContext* c = &cuda_context_of(r);
  return make_grad_choice(
      "select kernel (masked dY) + reduce-sum kernel",
      [=](const GradArgs& a) {
        float* masked = static_cast<float*>(a.workspace);
        float* zero = masked + n;
        check(cudaMemsetAsync(zero, 0, sizeof(float), c->stream), "cudaMemsetAsync (Where's gradient)");
        const float* dy = a.d_outputs[0];
        if (float* dx = a.d_inputs[1]) {
          launch_where(a.inputs[0], dy, zero, masked, sizeof(float), n, keep_x, c->stream);
          launch_reduce_sum(masked, dx, to_x.size, to_x.kept, to_x.reduced, 1.0f, c->stream);
        }
        if (float* dyv = a.d_inputs[2]) {
          launch_where(a.inputs[0], zero, dy, masked, sizeof(float), n, keep_y, c->stream);
          launch_reduce_sum(masked, dyv, to_y.size, to_y.kept, to_y.reduced, 1.0f, c->stream);
        }
      },
      static_cast<size_t>(n + 1) * sizeof(float));
}

}  // namespace

void register_cuda_where_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Where", bind(ctx, plan_where)).with_dtypes(kFloatAndHalves).with_gradient(plan_where_grad);
}

}  // namespace dnnx::cuda
