// One registration function per op family file in ops/ (the explicit list is ops/registry.cc).
#pragma once
#include "ops/op.h"

namespace dnnx {

void register_activation_ops(OpRegistry& r);  // activation.cc: Relu, Sigmoid, Tanh
void register_binary_ops(OpRegistry& r);      // binary.cc: Add, Sub, Mul, Div (broadcast)
void register_gemm_ops(OpRegistry& r);        // gemm.cc: Gemm
void register_matmul_ops(OpRegistry& r);      // matmul.cc: MatMul (batched, broadcast)
void register_softmax_ops(OpRegistry& r);     // softmax.cc: Softmax, LogSoftmax
void register_view_ops(OpRegistry& r);        // view.cc: Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout
void register_transpose_ops(OpRegistry& r);   // transpose.cc: Transpose
void register_concat_ops(OpRegistry& r);      // concat.cc: Concat
void register_conv_ops(OpRegistry& r);        // conv.cc: Conv
void register_pool_ops(OpRegistry& r);        // pool.cc: MaxPool
void register_lstm_ops(OpRegistry& r);        // lstm.cc: LSTM
void register_batchnorm_ops(OpRegistry& r);   // batchnorm.cc: BatchNormalization
void register_avg_pool_ops(OpRegistry& r);    // avg_pool.cc: AveragePool
void register_global_pool_ops(OpRegistry& r); // global_pool.cc: GlobalAveragePool, GlobalMaxPool
void register_lrn_ops(OpRegistry& r);         // lrn.cc: LRN
void register_variadic_ops(OpRegistry& r);    // variadic.cc: Sum, Max, Min (broadcast)
void register_param_activation_ops(OpRegistry& r);  // param_activation.cc: Clip, LeakyRelu, Elu
void register_pad_ops(OpRegistry& r);         // pad.cc: Pad (constant mode)
void register_shape_ops(OpRegistry& r);       // shape_ops.cc: Shape, ConstantOfShape
void register_gather_ops(OpRegistry& r);      // gather.cc: Gather
void register_slice_ops(OpRegistry& r);       // slice.cc: Slice
void register_cast_ops(OpRegistry& r);        // cast.cc: Cast
void register_expand_ops(OpRegistry& r);      // expand.cc: Expand
void register_reduce_ops(OpRegistry& r);      // reduce.cc: ReduceMean
void register_split_ops(OpRegistry& r);       // split.cc: Split
void register_fused_ops(OpRegistry& r);       // fused.cc: Conv+Relu, Gemm+Relu (made by runtime/passes; last)
void register_conv_add_relu_ops(OpRegistry& r);  // conv_add_relu.cc: Conv+Add+Relu (runtime/passes)
void register_conv_pool_ops(OpRegistry& r);   // conv_pool.cc: Conv+MaxPool, Conv+Relu+MaxPool (runtime/passes)
void register_channels_last_ops(OpRegistry& r);  // channels_last.cc: <op>@NHWC (runtime/passes; after the rest)
void register_lstm_stack_ops(OpRegistry& r);  // lstm_stack.cc: LSTMStack (made by runtime/passes; from fused.cc)

}  // namespace dnnx
