// The CUDA backend's gradient kernels (the backward half of training, engine/train): one
// registration function per family, listed explicitly in cuda_grad_kernels.cc. A factory gets a
// GradRequest whose `forward` is the model's CudaBackend; cuda_context_of() gives its context.
// Every GradArgs pointer is device memory.
#pragma once
#include "backends/cuda/backend/cuda_backend.h"
#include "runtime/training.h"

namespace dnnx::cuda {

// The explicit list of CUDA gradient kernels.
void register_cuda_grad_kernels(GradRegistry& registry);

// The stream, handles and options of the backend a gradient is planned for.
inline const CudaContext& cuda_context_of(const GradRequest& request) {
  return static_cast<const CudaBackend&>(request.forward).context();
}

// Dense layers and pointwise ops (dense_grad_kernels_cuda.cc): Gemm, MatMul, Relu, Sigmoid,
// Tanh, Softmax, LogSoftmax.
void register_cuda_dense_grad_kernels(GradRegistry& r);
void register_cuda_gemm_grad_kernels(GradRegistry& r);    // gemm_grad_cuda.cc: Gemm, Gemm+Relu
void register_cuda_matmul_grad_kernels(GradRegistry& r);  // matmul_grad_cuda.cc: MatMul (cuBLAS)
// Layers with planned algorithms or their own layouts (layer_grad_kernels_cuda.cc): Conv,
// MaxPool, LSTM, LSTMStack, Add/Sub/Mul/Div, Transpose, Concat, BatchNormalization.
void register_cuda_layer_grad_kernels(GradRegistry& r);

}  // namespace dnnx::cuda
