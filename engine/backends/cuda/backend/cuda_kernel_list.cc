// The CUDA backend's explicit registration list: one line per kernel file, each defining
// `void register_cuda_<file>_kernels(KernelRegistry&, const CudaContext&)` (no header declares
// them: this list does). Forward files come first, so that a gradient file completes the entry
// its forward file made (runtime/kernel_registry.h); conv_pool and gemm_softmax plan their halves
// through the registry, after those halves. Adding a kernel file is one line here.
#include "backends/cuda/backend/cuda_kernels.h"

// clang-format off
#define DNNX_CUDA_KERNEL_FILES(X)                                                                   \
  /* forward: <family>/<file>_cuda.cc */                                                           \
  X(activation) X(binary) X(gemm) X(matmul) X(softmax) X(transpose) X(transpose_pad) X(concat) X(conv) \
  X(pool)                                                                                          \
  X(lstm) X(lstm_stack) X(batchnorm) X(param_activation) X(avg_pool) X(global_pool) X(lrn)         \
  X(reduce) X(pad) X(slice) X(expand) X(split) X(gather) X(cast) X(tile) X(space_depth)           \
  X(compare) X(logical) X(where) X(range)  /* elementwise/: typed (integer, bool) kernels */        \
  X(unary_math) X(pow_prelu) X(normalization) X(dropout)  /* issue #15 (with their gradients) */  \
  X(recurrent)  /* GRU, RNN (rnn/recurrent_cuda.cc; gradients: recurrent_grad) */                 \
  /* pairs that plan their halves through the registry: after them */                              \
  X(conv_pool) X(gemm_softmax)                                                                     \
  /* gradients: <family>/<file>_grad_cuda.cc (dense_grad: dense_grad_kernels_cuda.cc) */           \
  X(dense_grad) X(gemm_grad) X(matmul_grad) X(conv_grad) X(pool_grad) X(binary_grad)               \
  X(param_activation_grad)                                                                         \
  X(layout_grad) X(batchnorm_grad) X(lstm_grad) X(lstm_stack_grad) X(recurrent_grad)              \
  /* issue #15: resampling, transposed conv, indexing (each gradient after its forward) */       \
  X(resize) X(conv_transpose) X(conv_transpose_grad)                                              \
  /* issues #35, #36: device kernels for ops that ran on the host (gradients in the same files) */ \
  X(float_class) X(float_math) X(cumsum)  /* elementwise/ */                                       \
  X(gather_nd) X(gather_elements) X(scatter_nd) X(scatter_elements) X(topk) X(arg_extreme)  /* indexing/ */ \
  X(roi_align)  /* roi/: RoiAlign and MaxRoiPool */                                                \
  X(nonzero) X(nms)  /* issue #36: staged device kernels (indexing/nonzero, roi/nms) */            \
  X(quantize_linear)  /* issue #37: quant/, QuantizeLinear and DequantizeLinear */                 \
  X(int8_gemm) X(int8_conv)  /* issue #37: quant/, the fused int8 layers on int8 tensor cores */   \
  /* issue #35: the transformer ops (elementwise/rms_norm, attention/rotary_embedding,          */ \
  /* dense/einsum, attention/attention)                                                          */ \
  X(rms_norm) X(rotary_embedding) X(einsum) X(attention)
// clang-format on

namespace dnnx::cuda {

#define DNNX_DECLARE(file) void register_cuda_##file##_kernels(KernelRegistry& r, const CudaContext& ctx);
DNNX_CUDA_KERNEL_FILES(DNNX_DECLARE)
#undef DNNX_DECLARE

void register_cuda_kernels(KernelRegistry& r, const CudaContext& ctx) {
#define DNNX_CALL(file) register_cuda_##file##_kernels(r, ctx);
  DNNX_CUDA_KERNEL_FILES(DNNX_CALL)
#undef DNNX_CALL
}

}  // namespace dnnx::cuda
