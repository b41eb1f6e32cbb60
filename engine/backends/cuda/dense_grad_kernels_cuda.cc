#include "backends/cuda/cuda_grad_kernels.h"

namespace dnnx::cuda {

// Filled in by the dense-gradient work (Gemm, MatMul, activations, softmax).
void register_cuda_dense_grad_kernels(GradRegistry& /*r*/) {}

}  // namespace dnnx::cuda
