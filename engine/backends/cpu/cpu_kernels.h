// One registration function per CPU kernel file (the explicit list is cpu_kernels.cc).
#pragma once
#include "core/backend.h"

namespace dnnx {

void register_cpu_activation_kernels(KernelRegistry& r);  // activation_cpu.cc
void register_cpu_binary_kernels(KernelRegistry& r);      // binary_cpu.cc
void register_cpu_gemm_kernels(KernelRegistry& r);        // gemm_cpu.cc
void register_cpu_matmul_kernels(KernelRegistry& r);      // matmul_cpu.cc
void register_cpu_softmax_kernels(KernelRegistry& r);     // softmax_cpu.cc
void register_cpu_transpose_kernels(KernelRegistry& r);   // transpose_cpu.cc
void register_cpu_concat_kernels(KernelRegistry& r);      // concat_cpu.cc
void register_cpu_conv_kernels(KernelRegistry& r);        // conv_cpu.cc
void register_cpu_pool_kernels(KernelRegistry& r);        // pool_cpu.cc
void register_cpu_lstm_kernels(KernelRegistry& r);        // lstm_cpu.cc

}  // namespace dnnx
