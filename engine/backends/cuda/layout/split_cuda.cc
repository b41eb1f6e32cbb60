// Split on CUDA, one of the real-world ops of issue #5: Concat reversed, one 2-D
// device-to-device copy (cudaMemcpy2DAsync) per output, any element type. Its gradient (float32)
// is Concat: each dY into its part of dX's rows, zeros (cudaMemset2DAsync) where none reaches.
#include <vector>

#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/backend/lambda_grad.h"
#include "backends/cuda/backend/simple_kernel.h"
#include "ops/layout/split.h"

namespace dnnx::cuda {

namespace {

// X viewed as [outer, row bytes]: output i's part of each row, `chunks[i]` bytes wide.
struct SplitRows {
  int64_t outer = 1;
  std::vector<size_t> chunks;
  size_t row = 0;
};

SplitRows split_rows(const Node& node, const std::vector<ValueInfo>& inputs, size_t elem) {
  const Shape& x = inputs[0].info.shape;
  const SplitParts parts = split_parts(node, inputs, x);
  SplitRows rows;
  int64_t inner = 1;
  for (int64_t d = 0; d < parts.axis; ++d) rows.outer *= x[d];
  for (size_t d = static_cast<size_t>(parts.axis) + 1; d < x.size(); ++d) inner *= x[d];
  for (int64_t s : parts.sizes) {
    rows.chunks.push_back(static_cast<size_t>(s * inner) * elem);
    rows.row += rows.chunks.back();
  }
  return rows;
}

KernelChoice plan_split(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                        const std::vector<TensorInfo>&) {
  const SplitRows rows = split_rows(node, inputs, dtype_size(inputs[0].info.dtype));
  const CudaContext* c = &ctx;
  return make_choice("cudaMemcpy2DAsync per output", [=](const KernelArgs& a) {
    const uint8_t* src = a.in<uint8_t>(0);
    size_t column = 0;
    for (size_t i = 0; i < rows.chunks.size(); ++i) {
      uint8_t* y = a.out<uint8_t>(i);
      if (y && rows.chunks[i] && rows.outer) {
        check(cudaMemcpy2DAsync(y, rows.chunks[i], src + column, rows.row, rows.chunks[i],
                                static_cast<size_t>(rows.outer), cudaMemcpyDeviceToDevice, c->stream),
              "cudaMemcpy2DAsync");
      }
      column += rows.chunks[i];
    }
  });
}

// Concat's forward: each dY_i copied into its part of dX's rows, zeros where no gradient
// reaches output i.
GradChoice plan_split_grad(const GradRequest& r) {
  const CudaContext* c = &cuda_context_of(r);
  const SplitRows rows = split_rows(r.node, r.inputs, sizeof(float));
  return make_grad_choice("cudaMemcpy2DAsync per output", [=](const GradArgs& a) {
    uint8_t* dx = reinterpret_cast<uint8_t*>(a.d_inputs[0]);
    if (!dx || !rows.outer) return;
    size_t column = 0;
    for (size_t i = 0; i < rows.chunks.size(); column += rows.chunks[i], ++i) {
      if (!rows.chunks[i]) continue;
      const auto height = static_cast<size_t>(rows.outer);
      if (a.d_outputs[i]) {
        check(cudaMemcpy2DAsync(dx + column, rows.row, a.d_outputs[i], rows.chunks[i], rows.chunks[i], height,
                                cudaMemcpyDeviceToDevice, c->stream),
              "cudaMemcpy2DAsync");
      } else {
        check(cudaMemset2DAsync(dx + column, rows.row, 0, rows.chunks[i], height, c->stream), "cudaMemset2DAsync");
      }
    }
  });
}

}  // namespace

void register_cuda_split_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Split", bind(ctx, plan_split)).with_dtypes(kFloatAndHalves).with_gradient(plan_split_grad);
}

}  // namespace dnnx::cuda
