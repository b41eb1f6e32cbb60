// The families behind register_cuda_layer_grad_kernels (layer_grad_kernels_cuda.cc), one
// registration function per file.
#pragma once
#include "backends/cuda/backend/cuda_grad_kernels.h"

namespace dnnx::cuda {

void register_cuda_conv_grad_kernels(GradRegistry& r);       // conv_grad_cuda.cc: Conv
void register_cuda_pool_grad_kernels(GradRegistry& r);       // pool_grad_cuda.cc: MaxPool
void register_cuda_binary_grad_kernels(GradRegistry& r);     // binary_grad_cuda.cc: Add, Sub, Mul, Div
void register_cuda_layout_grad_kernels(GradRegistry& r);     // layout_grad_cuda.cc: Transpose, Concat
void register_cuda_batchnorm_grad_kernels(GradRegistry& r);  // batchnorm_grad_cuda.cc: BatchNormalization
void register_cuda_lstm_grad_kernels(GradRegistry& r);       // lstm_grad_cuda.cc: LSTM
void register_cuda_lstm_stack_grad_kernels(GradRegistry& r); // lstm_stack_grad_cuda.cc: LSTMStack

}  // namespace dnnx::cuda
