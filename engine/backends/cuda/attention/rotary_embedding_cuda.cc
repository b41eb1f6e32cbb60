// RotaryEmbedding (opset 23) on CUDA, mirroring backends/cpu/attention/rotary_embedding_cpu.cc
// over ops/attention/rotary_embedding.h's geometry: 4-D [B, H, S, D] or packed 3-D [B, S, H*D]
// input (num_heads), interleaved or half-split pairs, rotary_embedding_dim below the head size
// (the rest passes through), with or without position_ids. One elementwise kernel
// (attention_kernels.cu), float32, float16 or bfloat16 storage with float arithmetic.
#include "backends/cuda/attention/attention_kernels.h"
#include "backends/cuda/backend/simple_kernel.h"

namespace dnnx::cuda {

namespace {

constexpr size_t kCos = 1, kSin = 2, kPositions = 3;

KernelChoice plan_rotary(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                         const std::vector<TensorInfo>&) {
  const DType dtype = inputs[0].info.dtype;
  require_cuda_floating(node, inputs[0].info, dtype, "input");
  require_cuda_floating(node, inputs[kCos].info, dtype, "cos_cache");
  require_cuda_floating(node, inputs[kSin].info, dtype, "sin_cache");
  const RotaryGeometry g = rotary_geometry(node, inputs);
  const CudaContext* c = &ctx;
  KernelChoice choice = make_choice("elementwise kernel", [=](const KernelArgs& a) {
    launch_rotary(g, a.in<void>(0), a.in<void>(kCos), a.in<void>(kSin),
                  g.has_positions ? a.in<int64_t>(kPositions) : nullptr, a.out<void>(0), dtype, c->stream);
  });
  if (g.has_positions) {
    choice.rejected.push_back({"range check", "a position_ids value outside the caches' " +
                                                  std::to_string(g.max_position) +
                                                  " rows gives zeros on CUDA (the CPU raises)"});
  }
  return choice;
}

}  // namespace

void register_cuda_rotary_embedding_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("RotaryEmbedding", bind(ctx, plan_rotary)).with_dtypes(kFloatAndHalves);
}

}  // namespace dnnx::cuda
