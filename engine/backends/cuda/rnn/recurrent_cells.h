// GRU and RNN nodes (ops/rnn/recurrent_attrs.h) as cuDNN cells, shared by their forward
// (recurrent_cuda.cc) and gradient (recurrent_grad_cuda.cc) registrations.
//   GRU  CUDNN_GRU, which is ONNX's linear_before_reset=1 form (PyTorch's): cuDNN computes
//        h' = tanh(W_h x + r * (R_h h + Rb_h) + Wb_h), the reset gate applied after the
//        recurrent matrix. linear_before_reset=0 ((r * h) R_h^T) has no cuDNN counterpart.
//   RNN  CUDNN_RNN_TANH or CUDNN_RNN_RELU: one activation for every direction (cuDNN's
//        bidirectional mode runs one cell both ways); Sigmoid has no cuDNN counterpart.
// clip has none either. What cuDNN cannot run is refused at load (the node runs on the host
// inside the CUDA plan, Note [host fallback]) and refused for training on CUDA.
#pragma once
#include <string>
#include <vector>

#include "backends/cuda/rnn/rnn_node.h"
#include "ops/rnn/recurrent_attrs.h"

namespace dnnx::cuda {

// What of a GRU or RNN node cuDNN cannot run ("" when it can).
std::string recurrent_unsupported_reason(const Node& node);

// The node as one cuDNN layer (its cell, form, sizes and presence; outputs: how many of the
// node's outputs the caller has, SIZE_MAX for all). UnsupportedModelError naming the node where
// recurrent_unsupported_reason is not "".
RnnNode recurrent_rnn_node(const Node& node, const std::vector<ValueInfo>& inputs, size_t outputs = SIZE_MAX);

}  // namespace dnnx::cuda
