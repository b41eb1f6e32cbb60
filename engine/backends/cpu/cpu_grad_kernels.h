// The CPU backend's gradient kernels (the backward half of training, engine/train): one
// registration function per file, listed explicitly in cpu_grad_kernels.cc.
#pragma once
#include "train/grad_kernel.h"

namespace dnnx {

// The explicit list of CPU gradient kernels.
void register_cpu_grad_kernels(GradRegistry& registry);

void register_cpu_activation_grad_kernels(GradRegistry& r);  // activation_grad_cpu.cc: Relu, Sigmoid, Tanh
void register_cpu_gemm_grad_kernels(GradRegistry& r);        // gemm_grad_cpu.cc: Gemm
void register_cpu_softmax_grad_kernels(GradRegistry& r);     // softmax_grad_cpu.cc: Softmax, LogSoftmax

}  // namespace dnnx
