#include "backends/cpu/cpu_grad_kernels.h"

namespace dnnx {

void register_cpu_grad_kernels(GradRegistry& r) {
  register_cpu_activation_grad_kernels(r);
  register_cpu_gemm_grad_kernels(r);
  register_cpu_softmax_grad_kernels(r);
  register_cpu_conv_grad_kernels(r);
  register_cpu_pool_grad_kernels(r);
  register_cpu_binary_grad_kernels(r);
  register_cpu_matmul_grad_kernels(r);
  register_cpu_transpose_grad_kernels(r);
  register_cpu_concat_grad_kernels(r);
  register_cpu_batchnorm_grad_kernels(r);
  register_cpu_lstm_grad_kernels(r);
}

}  // namespace dnnx
