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
  register_cuda_batchnorm_kernels(r, ctx);
  register_cuda_param_activation_kernels(r, ctx);
  register_cuda_avg_pool_kernels(r, ctx);
  register_cuda_global_pool_kernels(r, ctx);
  register_cuda_lrn_kernels(r, ctx);
  register_cuda_reduce_kernels(r, ctx);
  register_cuda_pad_kernels(r, ctx);
  register_cuda_slice_kernels(r, ctx);
  register_cuda_expand_kernels(r, ctx);
  register_cuda_split_kernels(r, ctx);
  register_cuda_gather_kernels(r, ctx);
  register_cuda_cast_kernels(r, ctx);
  register_cuda_conv_pool_kernels(r, ctx);
  register_cuda_gemm_softmax_kernels(r, ctx);
}

}  // namespace dnnx::cuda
