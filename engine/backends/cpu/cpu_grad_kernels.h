// The CPU backend's gradient kernels (the backward half of training, engine/train): one
// registration function per file, listed explicitly in cpu_grad_kernels.cc.
#pragma once
#include "runtime/training.h"

namespace dnnx {

// The explicit list of CPU gradient kernels.
void register_cpu_grad_kernels(GradRegistry& registry);

void register_cpu_activation_grad_kernels(GradRegistry& r);  // activation_grad_cpu.cc: Relu, Sigmoid, Tanh
void register_cpu_gemm_grad_kernels(GradRegistry& r);        // gemm_grad_cpu.cc: Gemm, Gemm+Relu
void register_cpu_softmax_grad_kernels(GradRegistry& r);     // softmax_grad_cpu.cc: Softmax, LogSoftmax
void register_cpu_conv_grad_kernels(GradRegistry& r);        // conv_grad_cpu.cc: Conv (1-D, 2-D, 3-D)
void register_cpu_pool_grad_kernels(GradRegistry& r);        // pool_grad_cpu.cc: MaxPool
void register_cpu_binary_grad_kernels(GradRegistry& r);      // binary_grad_cpu.cc: Add, Sub, Mul, Div
void register_cpu_matmul_grad_kernels(GradRegistry& r);      // matmul_grad_cpu.cc: MatMul
void register_cpu_transpose_grad_kernels(GradRegistry& r);   // transpose_grad_cpu.cc: Transpose
void register_cpu_concat_grad_kernels(GradRegistry& r);      // concat_grad_cpu.cc: Concat
void register_cpu_batchnorm_grad_kernels(GradRegistry& r);   // batchnorm_grad_cpu.cc: BatchNormalization
void register_cpu_lstm_grad_kernels(GradRegistry& r);        // lstm_grad_cpu.cc: LSTM (BPTT)

}  // namespace dnnx
