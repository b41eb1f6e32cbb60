// What every CUDA kernel file shares: the registry it registers in (one function per file,
// `void register_cuda_<file>_kernels(KernelRegistry&, const CudaContext&)`, listed explicitly in
// cuda_kernel_list.cc, which declares them), the capabilities its entries name, and the context
// its factories keep (a pointer to the model's CudaContext: its stream, handles and options).
// A gradient factory gets a GradRequest whose `forward` is the model's CudaBackend
// (cuda_context_of); every GradArgs pointer is device memory.
#pragma once
#include "backends/cuda/backend/cuda_backend.h"
#include "backends/cuda/backend/cuda_context.h"
#include "runtime/kernel_registry.h"

namespace dnnx::cuda {

// What of an LSTM node cuDNN cannot run ("" when it can): clip and input_forget, asked at load.
std::string lstm_unsupported_reason(const Node& node);
// Why the backend cannot run an LSTMStack under these options ("" when it can), asked by the
// fuse_lstm_stack pass: fp16 is left to the single-layer kernel (which stores float16); under
// bf16 the LSTMs stay float32 (no bfloat16 RNN kernel), so the float32 stack runs them.
std::string lstm_stack_unsupported_reason(const CudaContext& ctx);

// The explicit list (cuda_kernel_list.cc).
void register_cuda_kernels(KernelRegistry& r, const CudaContext& ctx);

// The stream, handles and options of the backend a gradient is planned for.
inline const CudaContext& cuda_context_of(const GradRequest& request) {
  return static_cast<const CudaBackend&>(request.forward).context();
}

// The element types of a kernel that also has half forms (Note [half storage] in
// runtime/passes/half_storage.cc), float16 for precision="fp16" and bfloat16 for "bf16":
// registered with .with_dtypes(kFloatAndHalves). Every channels-last kernel has them (Note
// [channels last]). bfloat16 needs sm_80 (the CMake architectures start there): cuDNN's
// convolutions take it as PSEUDO_BFLOAT16_CONFIG (bfloat16 tensors and filters, float compute
// type), cuBLAS(Lt) as CUDA_R_16BF with CUBLAS_COMPUTE_32F.
inline const std::vector<DType> kFloatAndHalves = {DType::Float32, DType::Float16, DType::BFloat16};
// The kernels with a float16 form but no bfloat16 one: cuDNN's RNNs (rnn/), whose
// cudnnSetRNNDescriptor_v8 documents FP16, FP32 and FP64 data only (cuDNN 9.19 accepts BFLOAT16
// descriptors on an H200, undocumented; PyTorch takes them from cuDNN 9.13 on: not relied on
// here). Under bf16 such a node stays float32, with Casts at its edges and the reason in its
// plan row.
inline const std::vector<DType> kFloatAndFloat16 = {DType::Float32, DType::Float16};

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
