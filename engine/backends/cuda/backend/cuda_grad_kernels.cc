#include "backends/cuda/backend/cuda_grad_kernels.h"

namespace dnnx::cuda {

void register_cuda_grad_kernels(GradRegistry& r) {
  register_cuda_dense_grad_kernels(r);
  register_cuda_layer_grad_kernels(r);
}

}  // namespace dnnx::cuda
