#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/cpu_kernels.h"

namespace dnnx {

void register_cpu_kernels(KernelRegistry& r) {
  register_cpu_activation_kernels(r);
  register_cpu_binary_kernels(r);
  register_cpu_gemm_kernels(r);
  register_cpu_matmul_kernels(r);
  register_cpu_softmax_kernels(r);
  register_cpu_transpose_kernels(r);
  register_cpu_concat_kernels(r);
  register_cpu_conv_kernels(r);
  register_cpu_pool_kernels(r);
  register_cpu_lstm_kernels(r);
  register_cpu_batchnorm_kernels(r);
  register_cpu_avg_pool_kernels(r);
  register_cpu_global_pool_kernels(r);
  register_cpu_lrn_kernels(r);
  register_cpu_variadic_kernels(r);
  register_cpu_param_activation_kernels(r);
  register_cpu_pad_kernels(r);
  register_cpu_shape_kernels(r);
  register_cpu_gather_kernels(r);
  register_cpu_slice_kernels(r);
  register_cpu_cast_kernels(r);
  register_cpu_expand_kernels(r);
  register_cpu_reduce_kernels(r);
  register_cpu_split_kernels(r);
}

}  // namespace dnnx
