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

}  // namespace dnnx
