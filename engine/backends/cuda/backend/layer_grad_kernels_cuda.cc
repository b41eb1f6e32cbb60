#include "backends/cuda/backend/layer_grad_kernels.h"

namespace dnnx::cuda {

// Layers with planned algorithms or their own layouts: Conv, MaxPool, LSTM, LSTMStack,
// Add/Sub/Mul/Div, Transpose, Concat, BatchNormalization.
void register_cuda_layer_grad_kernels(GradRegistry& r) {
  register_cuda_conv_grad_kernels(r);
  register_cuda_pool_grad_kernels(r);
  register_cuda_binary_grad_kernels(r);
  register_cuda_layout_grad_kernels(r);
  register_cuda_batchnorm_grad_kernels(r);
  register_cuda_lstm_grad_kernels(r);
  register_cuda_lstm_stack_grad_kernels(r);
}

}  // namespace dnnx::cuda
