// The gradient of one recurrent layer (LSTM, GRU or RNN) on cuDNN: cudnnRNNBackwardData_v8 +
// cudnnRNNBackwardWeights_v8, for every direction and layout the forward takes, bridged to ONNX as
// the forward kernel is (rnn_forward.h: weight layout, "reverse" by reversing the sequences,
// layout-0 bidirectional Y and layout-1 bidirectional states transposed: rnn_layouts.h). The op
// files (lstm_grad_cuda.cc, recurrent_grad_cuda.cc) refuse what cuDNN cannot train and plan the
// rest here.
//
// The kernel runs the layer's forward too (Note [training forward] in runtime/training.h):
// cuDNN's backward reads the reserve space of a forward in CUDNN_FWD_MODE_TRAINING, so the tail's
// forward of this layer is that training-mode cudnnRNNForward, and its reserve space, the packed
// weights and cuDNN's Y (where it is not ONNX's Y as is) stay in the layer's kept memory until the
// backward. No forward is run twice.
//
// Forward: pack W, R, B (the current values, on the device) into the kept weight space (one
// launch: WeightCopier); X reversed / states transposed into the workspace where cuDNN's layout
// differs; cudnnRNNForward (training) -> Y, Y_h, (Y_c), reserve.
// Backward: dY (zeros where no gradient reaches Y), dY_h, (dY_c) to cuDNN's layouts; BackwardData
// -> dX, dh0, (dc0); BackwardWeights adds into the zeroed dweight space -> unpacked to dW, dR, dB
// (one launch). float32 only; every sequence full length (the ops refuse to train with
// sequence_lens: OpDef::untrainable).
#pragma once
#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/rnn/rnn_node.h"

namespace dnnx::cuda {

// The training kernel of r.node (its sizes, cell and form in `rnn`; rnn_node.h; its presence read
// with rnn_presence(r.node, r.inputs, r.outputs.size())). An empty sequence, batch or input passes
// zeros back.
GradChoice plan_rnn_train(const GradRequest& r, const RnnNode& rnn);

}  // namespace dnnx::cuda
