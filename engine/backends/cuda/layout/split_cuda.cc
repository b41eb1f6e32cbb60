// Split on CUDA, one of the real-world ops of issue #5: Concat reversed, one 2-D
// device-to-device copy (cudaMemcpy2DAsync) per output, any element type.
#include "backends/cuda/backend/simple_kernel.h"
#include "ops/layout/split.h"

namespace dnnx::cuda {

namespace {

KernelChoice plan_split(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                        const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;
  const SplitParts parts = split_parts(node, inputs, x);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < parts.axis; ++d) outer *= x[d];
  for (size_t d = static_cast<size_t>(parts.axis) + 1; d < x.size(); ++d) inner *= x[d];
  const size_t elem = dtype_size(inputs[0].info.dtype);
  std::vector<size_t> chunks;
  size_t row = 0;
  for (int64_t s : parts.sizes) {
    chunks.push_back(static_cast<size_t>(s * inner) * elem);
    row += chunks.back();
  }
  const CudaContext* c = &ctx;
  return make_choice("cudaMemcpy2DAsync per output", [=](const KernelArgs& a) {
    const uint8_t* src = a.in<uint8_t>(0);
    size_t column = 0;
    for (size_t i = 0; i < chunks.size(); ++i) {
      uint8_t* y = a.out<uint8_t>(i);
      if (y && chunks[i] && outer) {
        check(cudaMemcpy2DAsync(y, chunks[i], src + column, row, chunks[i], static_cast<size_t>(outer),
                                cudaMemcpyDeviceToDevice, c->stream),
              "cudaMemcpy2DAsync");
      }
      column += chunks[i];
    }
  });
}

}  // namespace

void register_cuda_split_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Split", bind(ctx, plan_split)).with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda
