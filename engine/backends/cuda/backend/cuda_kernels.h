// One registration function per CUDA kernel file (the explicit list is cuda_kernels.cc). Each
// factory keeps a pointer to the model's CudaContext for its stream, handles and options.
#pragma once
#include "backends/cuda/backend/cuda_context.h"
#include "runtime/backend.h"

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

// The element types of a kernel that also has a float16 form (Note [half storage] in
// runtime/passes/half_storage.cc): registered with .with_dtypes(kFloatAndHalf). Every
// channels-last kernel has one (Note [channels last]).
inline const std::vector<DType> kFloatAndHalf = {DType::Float32, DType::Float16};

// The check of a "<op>@NHWC" registration: "no channels-last <op> with <why>" for what cuDNN's
// NHWC descriptors cannot take, from `why` ("" when the node can run).
inline NodeCheck channels_last_check(const std::string& op, std::function<std::string(const Node&)> why) {
  return [op, why = std::move(why)](const Node& node) {
    const std::string reason = why(node);
    return reason.empty() ? reason : "no channels-last " + op + " with " + reason;
  };
}

// auto_pad and pads as cuDNN's descriptors take them: explicit and the same at both ends ("" when
// they are); `prefix` names the attributes of a fused half (conv/conv_layout.cc).
std::string symmetric_pads_reason(const Node& node, const std::string& prefix);
// What of a MaxPool (attributes under `prefix`) cuDNN's NHWC pooling cannot take ("" when none:
// pool/pool_cuda.cc).
std::string channels_last_max_pool_reason(const Node& node, const std::string& prefix);

}  // namespace dnnx::cuda
