// The rewrites the trainable tail takes (train/tail_plan.h), the ones that keep every parameter as
// it is: stacked LSTM layers become one LSTMStack node where the backend trains such a stack
// (Note [stacked LSTMs in training]), and Gemm -> Relu one Gemm+Relu (Note [Gemm+Relu in
// training]).
#pragma once
#include <vector>

#include "runtime/backend.h"
#include "ir/graph.h"
#include "runtime/training.h"

namespace dnnx {

// Note [stacked LSTMs in training]: the tail runs without the inference passes, so that what is
// trained is exactly the model's initializers. fuse_lstm_stack keeps that promise: the LSTMStack
// node reads every layer's W, R, B under their own names and folds nothing into them, so SGD
// updates and Model.save() writes the same tensors. A stack trains as one multi-layer cuDNN RNN
// (forward in training mode, backward data, backward weights: one call each), which overlaps the
// layers as PyTorch's nn.LSTM(num_layers=L) does, instead of one call per layer and direction.
//
// The chain is fused per input shape, the tail's inputs fixed to `input_shapes` (so that the
// Reshapes between the layers are checked against real dims, also for values the frozen head
// computes), and only where the backend has both the LSTMStack kernel and its gradient (CUDA:
// fp32/tf32, forward seq-major layers without sequence_lens or initial states); every other LSTM
// trains alone. Layers below the first trainable one are in the frozen head (trainable="last:1"
// on a stack: the head runs the frozen layers as one inference stack, the tail the top layer
// alone); a frozen layer between trainable ones stays in the tail's stack, and cuDNN's one
// weight-gradient call computes its gradient too, which is then not used.
// Note [Gemm+Relu in training]: fuse_gemm_relu keeps the promise too (the Gemm's A, B and C are
// its own). The Relu then runs in the GEMM's epilogue (cuBLASLt's on CUDA: one kernel fewer per
// step), and the fused node's gradient masks dY where the output is 0, then runs Gemm's (on CUDA
// one kernel masks and sums a row-vector bias's gradient, in place of the Relu's backward and
// the bias's sum). Measured on an H200, LeNet's last:2 step at batch 256: fc1 + relu1 forward
// 24.7 -> 20.4 us, backward 20.6 -> 20.4 us. Only where the backend has the Gemm+Relu kernel
// and its gradient.

// Which of the two the tail takes (the passes of those names, as the user left them).
struct TailFusions {
  bool lstm_stacks = true;
  bool gemm_relu = true;
};

Graph tail_graph_for(const Graph& tail, const std::vector<Shape>& input_shapes, const Backend& backend,
                     const TailFusions& fusions);

}  // namespace dnnx
