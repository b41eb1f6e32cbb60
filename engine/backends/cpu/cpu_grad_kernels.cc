#include "backends/cpu/cpu_grad_kernels.h"

namespace dnnx {

void register_cpu_grad_kernels(GradRegistry& r) {
  register_cpu_activation_grad_kernels(r);
  register_cpu_gemm_grad_kernels(r);
  register_cpu_softmax_grad_kernels(r);
}

}  // namespace dnnx
