// Equal, Less, Greater, LessOrEqual, GreaterOrEqual on CUDA (float32, int32, int64; Equal also
// bool) -> bool, through the typed broadcast kernels (typed_kernels.cu).
#include "backends/cuda/elementwise/typed_binary.h"

namespace dnnx::cuda {

void register_cuda_compare_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Equal", typed_binary_factory(ctx, TypedBinary::Equal));
  r.add("Less", typed_binary_factory(ctx, TypedBinary::Less));
  r.add("Greater", typed_binary_factory(ctx, TypedBinary::Greater));
  r.add("LessOrEqual", typed_binary_factory(ctx, TypedBinary::LessOrEqual));
  r.add("GreaterOrEqual", typed_binary_factory(ctx, TypedBinary::GreaterOrEqual));
}

}  // namespace dnnx::cuda
