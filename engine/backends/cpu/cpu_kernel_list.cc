// The CPU backend's explicit registration list: one line per kernel file, each defining
// `void register_cpu_<file>_kernels(KernelRegistry&)` (no header declares them: this list does).
// Forward files come first, so that a gradient file completes the entry its forward file made
// (runtime/kernel_registry.h). Adding a kernel file is one line here.
#include "backends/cpu/cpu_backend.h"
#include "runtime/kernel_registry.h"

// clang-format off
#define DNNX_CPU_KERNEL_FILES(X)                                                                    \
  /* forward: <file>_cpu.cc */                                                                     \
  X(activation) X(binary) X(gemm) X(matmul) X(softmax) X(transpose) X(concat) X(conv) X(pool)      \
  X(lstm) X(batchnorm) X(avg_pool) X(global_pool) X(lrn) X(variadic) X(param_activation) X(pad)   \
  X(shape) X(gather) X(slice) X(cast) X(expand) X(reduce) X(split)                                 \
  X(compare) X(logical) X(where) X(range)                                                          \
  X(unary_math) X(pow_prelu) X(normalization) X(dropout)  /* issue #15 (with their gradients) */  \
  /* gradients: <file>_grad_cpu.cc, after their forward kernels */                                 \
  X(activation_grad) X(gemm_grad) X(softmax_grad) X(conv_grad) X(pool_grad) X(binary_grad)         \
  X(param_activation_grad)                                                                         \
  X(matmul_grad) X(transpose_grad) X(concat_grad) X(batchnorm_grad) X(lstm_grad)                 \
  /* issue #15: resampling, transposed conv, indexing (each gradient after its forward) */       \
  X(resize) X(conv_transpose) X(conv_transpose_grad) X(indexing)                                 \
  X(recurrent) X(recurrent_grad)  /* GRU, RNN */                                                \
  /* issue #35 (ops-nn): attention, signal, new conv/pool/resample kernels */                      \
  X(attention) X(rotary_embedding) X(grid_sample) X(lp_pool) X(col2im) X(window) X(affine_grid) X(max_unpool) \
  X(mel_weight_matrix) X(deform_conv) X(dft) \
  /* issue #35, indexing / layout / shape / dense (ops-index; gradients in their files) */       \
  X(size) X(eye_like)                                                                            \
  X(gather_nd) X(scatter_elements) X(one_hot) X(trilu) X(reverse_sequence)                       \
  X(space_depth) X(center_crop_pad) X(einsum) X(det) \
  /* issue #35, math families (ops-math; gradients in the forward files) */                        \
  X(float_math) X(float_class) X(bitwise) X(cumulative) X(hardmax) X(moment_norms) X(class_loss) X(moment_norms_grad) \
  /* issue #35, opset 27 recurrent-model kernels (attn2) */                                       \
  X(linear_attention) X(causal_conv_with_state) \
  /* issue #35, node-suite gaps (gaps) */                                                          \
  X(bitcast) X(tensor_scatter) \
  /* issue #35, text (tfidf) */ \
  X(text) \
  /* issue #35, string tensors (strings) */ \
  X(strings) \
  /* issue #37, quantized models (q8): quant/ */ \
  X(quantize_linear) X(dynamic_quantize_linear) X(matmul_integer) X(conv_integer) \
  X(qlinear_binary) X(qlinear_lookup) X(qlinear_global_average_pool) X(qgemm) X(qlinear_concat) \
  X(qlinear_pool_softmax) X(dynamic_quantize_lstm) \
  /* issue #37, int8 compute (int8cpu): Int8Conv, Int8Gemm, Int8MatMul */ \
  X(qdq_int8) \
  /* issue #36, regions of interest (roi) */ \
  X(roi_align) X(max_roi_pool) \
  /* issue #38, channels-last convs and pools (Note [channels-last conv on the cpu]) */ \
  X(conv_nhwc) X(pool_nhwc) X(batchnorm_nhwc) \
  /* ai.onnx.ml, traditional ML (mlops): ml/ */ \
  X(array_feature_extractor) X(binarizer) X(label_encoder) X(tree_ensemble) X(scaler) X(normalizer)
// clang-format on

namespace dnnx {

#define DNNX_DECLARE(file) void register_cpu_##file##_kernels(KernelRegistry& r);
DNNX_CPU_KERNEL_FILES(DNNX_DECLARE)
#undef DNNX_DECLARE

void register_cpu_kernels(KernelRegistry& r) {
#define DNNX_CALL(file) register_cpu_##file##_kernels(r);
  DNNX_CPU_KERNEL_FILES(DNNX_CALL)
#undef DNNX_CALL
}

}  // namespace dnnx
