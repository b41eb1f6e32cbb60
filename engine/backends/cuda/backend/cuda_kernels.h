// One registration function per CUDA kernel file (the explicit list is cuda_kernels.cc). Each
// factory keeps a pointer to the model's CudaContext for its stream, handles and options.
#pragma once
#include "backends/cuda/backend/cuda_context.h"
#include "core/backend.h"

namespace dnnx::cuda {

void register_cuda_activation_kernels(KernelRegistry& r, const CudaContext& ctx);  // activation_cuda.cc
void register_cuda_binary_kernels(KernelRegistry& r, const CudaContext& ctx);      // binary_cuda.cc
void register_cuda_gemm_kernels(KernelRegistry& r, const CudaContext& ctx);        // gemm_cuda.cc
void register_cuda_matmul_kernels(KernelRegistry& r, const CudaContext& ctx);      // matmul_cuda.cc
void register_cuda_softmax_kernels(KernelRegistry& r, const CudaContext& ctx);     // softmax_cuda.cc
void register_cuda_transpose_kernels(KernelRegistry& r, const CudaContext& ctx);   // transpose_cuda.cc
void register_cuda_concat_kernels(KernelRegistry& r, const CudaContext& ctx);      // concat_cuda.cc
void register_cuda_conv_kernels(KernelRegistry& r, const CudaContext& ctx);        // conv_cuda.cc
void register_cuda_pool_kernels(KernelRegistry& r, const CudaContext& ctx);        // pool_cuda.cc
void register_cuda_lstm_kernels(KernelRegistry& r, const CudaContext& ctx);        // lstm_cuda.cc
void register_cuda_lstm_stack_kernels(KernelRegistry& r, const CudaContext& ctx);  // lstm_stack_cuda.cc
// The real-world ops of issue #5, one file per op family (Sum/Max/Min are binary_cuda.cc's):
void register_cuda_batchnorm_kernels(KernelRegistry& r, const CudaContext& ctx);         // batchnorm_cuda.cc
void register_cuda_param_activation_kernels(KernelRegistry& r, const CudaContext& ctx);  // param_activation_cuda.cc
void register_cuda_avg_pool_kernels(KernelRegistry& r, const CudaContext& ctx);          // avg_pool_cuda.cc
void register_cuda_global_pool_kernels(KernelRegistry& r, const CudaContext& ctx);       // global_pool_cuda.cc
void register_cuda_lrn_kernels(KernelRegistry& r, const CudaContext& ctx);               // lrn_cuda.cc
void register_cuda_reduce_kernels(KernelRegistry& r, const CudaContext& ctx);            // reduce_cuda.cc
void register_cuda_pad_kernels(KernelRegistry& r, const CudaContext& ctx);               // pad_cuda.cc
void register_cuda_slice_kernels(KernelRegistry& r, const CudaContext& ctx);             // slice_cuda.cc
void register_cuda_expand_kernels(KernelRegistry& r, const CudaContext& ctx);            // expand_cuda.cc
void register_cuda_split_kernels(KernelRegistry& r, const CudaContext& ctx);             // split_cuda.cc
void register_cuda_gather_kernels(KernelRegistry& r, const CudaContext& ctx);            // gather_cuda.cc
void register_cuda_cast_kernels(KernelRegistry& r, const CudaContext& ctx);              // cast_cuda.cc
// conv_pool_cuda.cc: Conv(+Relu)+MaxPool; its factories plan the halves through `r`, so `r` must
// outlive them (the backend's own registry).
void register_cuda_conv_pool_kernels(KernelRegistry& r, const CudaContext& ctx);
// gemm_softmax_cuda.cc: Gemm+Softmax; its pair plans the Gemm and the Softmax through `r` likewise.
void register_cuda_gemm_softmax_kernels(KernelRegistry& r, const CudaContext& ctx);

// What of an LSTM node cuDNN cannot run ("" when it can): clip and input_forget, asked at load.
std::string lstm_unsupported_reason(const Node& node);
// Why the backend cannot run an LSTMStack under these options ("" when it can), asked by the
// fuse_lstm_stack pass: fp16 is left to the single-layer kernel.
std::string lstm_stack_unsupported_reason(const CudaContext& ctx);

void register_cuda_kernels(KernelRegistry& r, const CudaContext& ctx);

}  // namespace dnnx::cuda
