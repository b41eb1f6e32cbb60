// Cast and CastLike on CUDA (Cast one of the real-world ops of issue #5): a copy when the types
// agree, else a conversion kernel (cast_kernels.cu) between float32, int32, int64, bool, float16
// and bfloat16 (to float16 or bfloat16: round to nearest even; the edges of half storage; to
// bool: x != 0).
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "ops/layout/cast.h"

namespace dnnx::cuda {

namespace {

// launch_cast's codes (glue_kernels.h).
int dtype_code(DType t) {
  switch (t) {
    case DType::Float32: return 0;
    case DType::Int32: return 1;
    case DType::Int64: return 2;
    case DType::Float16: return 3;
    case DType::Bool: return 4;
    case DType::BFloat16: return 5;
    default: break;  // no other type reaches a CUDA kernel (CudaBackend::plan_node)
  }
  return 0;
}

KernelChoice plan_cast(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                       const std::vector<TensorInfo>& outputs) {
  // Cast's `to`; CastLike's target_type's type (its output's)
  const DType from = inputs[0].info.dtype, to = node.op_type == "CastLike" ? outputs[0].dtype : cast_target(node);
  const int64_t n = numel(outputs[0].shape);
  const CudaContext* c = &ctx;
  if (from == to) {
    const size_t bytes = static_cast<size_t>(n) * dtype_size(from);
    return make_choice("copy", [=](const KernelArgs& a) {
      if (bytes) {
        check(cudaMemcpyAsync(a.out<void>(0), a.in<void>(0), bytes, cudaMemcpyDeviceToDevice, c->stream),
              "cudaMemcpyAsync");
      }
    });
  }
  const int f = dtype_code(from), t = dtype_code(to);
  const bool convert = is_half(from) || is_half(to);  // the edges of half storage
  KernelChoice choice = make_choice(convert ? "convert kernel" : "cast kernel", [=](const KernelArgs& a) {
    launch_cast(a.in<void>(0), f, a.out<void>(0), t, n, c->stream);
  });
  if (convert) {
    choice.math = std::string(dtype_name(from)) + " -> " + dtype_name(to) +
                  (is_half(to) ? " (round to nearest even)" : " (exact)");
  }
  return choice;
}

}  // namespace

void register_cuda_cast_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Cast", bind(ctx, plan_cast));
  r.add("CastLike", bind(ctx, plan_cast));
}

}  // namespace dnnx::cuda
