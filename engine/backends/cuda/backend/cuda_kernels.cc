#include "backends/cuda/backend/cuda_kernels.h"

namespace dnnx::cuda {

void register_cuda_kernels(KernelRegistry& r, const CudaContext& ctx) {
  register_cuda_activation_kernels(r, ctx);
  register_cuda_binary_kernels(r, ctx);
  register_cuda_gemm_kernels(r, ctx);
  register_cuda_matmul_kernels(r, ctx);
  register_cuda_softmax_kernels(r, ctx);
  register_cuda_transpose_kernels(r, ctx);
  register_cuda_concat_kernels(r, ctx);
  register_cuda_conv_kernels(r, ctx);
  register_cuda_pool_kernels(r, ctx);
  register_cuda_lstm_kernels(r, ctx);
  register_cuda_lstm_stack_kernels(r, ctx);
  register_cuda_real_ops_kernels(r, ctx);
  register_cuda_conv_pool_kernels(r, ctx);
  register_cuda_gemm_softmax_kernels(r, ctx);
}

}  // namespace dnnx::cuda
