// One registration function per CPU kernel file (the explicit list is cpu_kernels.cc).
#pragma once
#include "runtime/backend.h"

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
void register_cpu_batchnorm_kernels(KernelRegistry& r);   // batchnorm_cpu.cc
void register_cpu_avg_pool_kernels(KernelRegistry& r);    // avg_pool_cpu.cc
void register_cpu_global_pool_kernels(KernelRegistry& r); // global_pool_cpu.cc
void register_cpu_lrn_kernels(KernelRegistry& r);         // lrn_cpu.cc
void register_cpu_variadic_kernels(KernelRegistry& r);    // variadic_cpu.cc
void register_cpu_param_activation_kernels(KernelRegistry& r);  // param_activation_cpu.cc
void register_cpu_pad_kernels(KernelRegistry& r);         // pad_cpu.cc
void register_cpu_shape_kernels(KernelRegistry& r);       // shape_cpu.cc
void register_cpu_gather_kernels(KernelRegistry& r);      // gather_cpu.cc
void register_cpu_slice_kernels(KernelRegistry& r);       // slice_cpu.cc
void register_cpu_cast_kernels(KernelRegistry& r);        // cast_cpu.cc
void register_cpu_expand_kernels(KernelRegistry& r);      // expand_cpu.cc
void register_cpu_reduce_kernels(KernelRegistry& r);      // reduce_cpu.cc
void register_cpu_split_kernels(KernelRegistry& r);       // split_cpu.cc

}  // namespace dnnx
