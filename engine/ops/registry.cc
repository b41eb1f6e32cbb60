// The op registry's explicit list: one line per op family file in ops/, each defining
// `void register_<family>_ops(OpRegistry&)` (no header declares them: this list does). Fused ops
// copy or read the definitions of the ops they fuse, so they come after them; the channels-last
// forms wrap the window ops, so they come last. Adding an op family file is one line here.
#include "ops/op.h"

// clang-format off
#define DNNX_OP_FAMILIES(X)                                                                         \
  X(activation)  /* Relu, Sigmoid, Tanh, Neg, Abs */                                               \
  X(binary)      /* Add, Sub, Mul, Div, Mod (broadcast) */                                         \
  X(compare)     /* Equal, Less, Greater, LessOrEqual, GreaterOrEqual -> bool */                   \
  X(logical)     /* Not, And, Or, Xor (bool) */                                                    \
  X(where) X(range)                                                                                \
  X(gemm) X(matmul) X(softmax)                                                                     \
  X(view)        /* Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout */                     \
  X(transpose) X(concat) X(conv) X(pool) X(lstm) X(batchnorm) X(avg_pool)                         \
  X(global_pool) /* GlobalAveragePool, GlobalMaxPool */                                            \
  X(lrn)                                                                                           \
  X(variadic)    /* Sum, Max, Min (broadcast) */                                                   \
  X(param_activation) /* Clip, LeakyRelu, Elu */                                                   \
  X(pad)                                                                                           \
  X(shape)       /* shape_ops.cc: Shape, ConstantOfShape */                                        \
  X(gather) X(slice) X(cast) X(expand) X(reduce) X(split)                                          \
  /* issue #15: unary math, Pow/PRelu, the normalizations */                                      \
  X(unary_math)    /* Exp, Log, Sqrt, Reciprocal, Erf, Gelu, HardSigmoid, HardSwish, Softplus, Mish */ \
  X(pow_prelu)     /* Pow, PRelu (broadcast) */                                                    \
  X(normalization) /* LayerNormalization, InstanceNormalization, GroupNormalization */            \
  /* made by runtime/passes, after the ops they read */                                            \
  X(fused)         /* Conv+Relu, Gemm+Relu, Gemm+Softmax (copies Conv and Gemm) */               \
  X(lstm_stack)    /* LSTMStack */                                                                 \
  X(conv_add_relu) /* Conv+Add+Relu */                                                             \
  X(conv_pool)     /* Conv+MaxPool, Conv+Relu+MaxPool (reads the fused ops) */                     \
  /* issue #15: resampling, transposed conv, indexing, reductions */                               \
  X(resize)        /* Resize, Upsample */                                                        \
  X(conv_transpose)                                                                              \
  X(indexing)      /* GatherElements, ScatterND, Tile, TopK, ArgMax, ArgMin */                   \
  X(recurrent)     /* GRU, RNN */                                                                \
  /* issue #35 (ops-nn): attention, signal, new conv/pool/resample ops */                          \
  X(attention)     /* Attention */                                                              \
  X(rotary_embedding) X(grid_sample) X(lp_pool) X(col2im) X(window) X(affine_grid) X(max_unpool) \
  X(mel_weight_matrix) X(deform_conv) X(dft) \
  /* issue #35, indexing / layout / shape / dense (ops-index) */                                  \
  X(size) X(eye_like)                                                                            \
  X(gather_nd) X(scatter_elements) /* ScatterElements, Scatter */ X(one_hot) X(trilu)            \
  X(reverse_sequence)                                                                            \
  X(space_depth)   /* DepthToSpace, SpaceToDepth */ X(center_crop_pad)                          \
  X(einsum) X(det) \
  /* issue #35, math families (ops-math) */                                                        \
  X(float_math)    /* Sin..Atanh, Ceil, Floor, Round, Softsign, Celu, ThresholdedRelu, Swish, Sign, Shrink */ \
  X(float_class)   /* IsNaN, IsInf */                                                              \
  X(bitwise)       /* BitShift, BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot */              \
  X(cumulative)    /* CumSum, CumProd */                                                           \
  X(hardmax)                                                                                       \
  X(moment_norms)  /* RMSNormalization, LpNormalization, MeanVarianceNormalization */            \
  X(class_loss)    /* NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss */                        \
  /* issue #35, opset 27 recurrent-model ops (attn2) */                                           \
  X(linear_attention) X(causal_conv_with_state) \
  /* issue #35, node-suite gaps (gaps) */                                                          \
  X(bitcast)       /* BitCast */                                                                   \
  X(tensor_scatter) /* TensorScatter */                                                         \
  /* issue #35, text (tfidf) */                                                                    \
  X(text)          /* TfIdfVectorizer */                                                           \
  /* issue #35, string tensors (strings) */                                                        \
  X(string)        /* StringConcat, RegexFullMatch, StringNormalizer */ \
  /* issue #37, quantized models (q8): ops/quant/ */                                               \
  X(quantize_linear) /* QuantizeLinear, DequantizeLinear */                                        \
  X(dynamic_quantize_linear)                                                                       \
  X(matmul_integer)  /* MatMulInteger, QLinearMatMul */                                            \
  X(conv_integer)    /* ConvInteger, QLinearConv */                                                \
  /* com.microsoft's, as onnxruntime's quantization tool writes them (Note [op domains]) */       \
  X(qlinear_binary)  /* QLinearAdd, QLinearMul */                                                  \
  X(qlinear_lookup)  /* QLinearSigmoid, QLinearLeakyRelu */                                        \
  X(qlinear_global_average_pool) X(qgemm)                                                          \
  X(qlinear_concat) X(qlinear_pool_softmax) /* QLinearAveragePool, QLinearSoftmax */             \
  X(matmul_integer_to_float) /* MatMulIntegerToFloat, DynamicQuantizeMatMul */ \
  X(dynamic_quantize_lstm)   /* DynamicQuantizeLSTM */ \
  /* issue #37, int8 compute (int8cpu): the fused QDQ layers of fuse_qdq_int8 */                 \
  X(qdq_int8)        /* Int8Conv, Int8Gemm, Int8MatMul */ \
  /* issue #36, regions of interest (roi) */                                                      \
  X(roi_align) X(max_roi_pool) \
  /* issue #36, control flow and value-dependent shapes (cf): Note [staged plans] */               \
  X(value_shaped)  /* NonZero, Compress */                                                         \
  X(control)       /* If, Loop, Scan (subgraphs) */                                               \
  X(nms_unique)    /* NonMaxSuppression, Unique (value-shaped, host computes) */                  \
  X(value_shaped_strings) /* StringSplit, StringNormalizer (value-shaped) */ \
  /* issue #36, sequences and optionals (seq): Note [sequences] */                                 \
  X(sequence)      /* Sequence*, SplitToSequence, ConcatFromSequence, SequenceMap, Optional* */   \
  /* ai.onnx.ml, traditional ML (mlops): ops/ml/ */                                                \
  X(array_feature_extractor) X(binarizer) X(label_encoder) X(tree_ensemble) X(scaler) X(normalizer) \
  /* made by the channels_last pass: <op>@NHWC wraps window ops above (Int8Conv among them), so last */ \
  X(channels_last)
// clang-format on

namespace dnnx {

#define DNNX_DECLARE(family) void register_##family##_ops(OpRegistry& r);
DNNX_OP_FAMILIES(DNNX_DECLARE)
#undef DNNX_DECLARE

const OpRegistry& op_registry() {
  static const OpRegistry registry = [] {
    OpRegistry r;
#define DNNX_CALL(family) register_##family##_ops(r);
    DNNX_OP_FAMILIES(DNNX_CALL)
#undef DNNX_CALL
    return r;
  }();
  return registry;
}

}  // namespace dnnx
