// The one rewrite the trainable tail takes (train/tail_plan.h): stacked LSTM layers become one
// LSTMStack node where the backend trains such a stack (Note [stacked LSTMs in training]).
#pragma once
#include <vector>

#include "core/backend.h"
#include "core/graph.h"
#include "train/grad_kernel.h"

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
Graph tail_graph_for(const Graph& tail, const std::vector<Shape>& input_shapes, const Backend& backend,
                     const GradRegistry& grads, bool fuse_lstm_stacks);

}  // namespace dnnx
