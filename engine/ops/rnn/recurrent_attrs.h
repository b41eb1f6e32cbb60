// GRU's and RNN's ONNX meaning, written once (ops/rnn/recurrent.cc) and shared by every backend's
// kernel: the parsed attributes, the input/output positions and the sizes read from the input
// types. LSTM has its own (ops/rnn/lstm_attrs.h); the direction, layout and dims types are shared.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ops/rnn/lstm_attrs.h"
#include "ops/op.h"

namespace dnnx {

enum class RecurrentCell {
  Gru,  // gates in ONNX order z (update), r (reset), h (hidden)
  Rnn,  // one gate: H_t = f(X_t·W^T + H_{t-1}·R^T + Wb + Rb)
};

// Positions of the node's inputs and outputs (ONNX order; all but X, W, R are optional).
enum RecurrentInput : size_t {
  kRecX = 0,              // [seq, batch, input] (layout 0) or [batch, seq, input] (layout 1)
  kRecW = 1,              // [num_dir, G*H, input], G = 3 (GRU: z, r, h) or 1 (RNN)
  kRecR = 2,              // [num_dir, G*H, H]
  kRecB = 3,              // [num_dir, 2*G*H]: W biases then R biases
  kRecSequenceLens = 4,   // [batch] int32
  kRecInitialH = 5,       // [num_dir, batch, H] (layout 0) or [batch, num_dir, H] (layout 1)
};
enum RecurrentOutput : size_t {
  kRecY = 0,   // [seq, num_dir, batch, H] (layout 0) or [batch, seq, num_dir, H] (layout 1)
  kRecYH = 1,  // [num_dir, batch, H] (layout 0) or [batch, num_dir, H] (layout 1)
};

// The activations dnnx runs inside a cell. RNN: f per direction, any of the three (PyTorch's
// nn.RNN exports Tanh or Relu). GRU: f = Sigmoid, g = Tanh only (the defaults; what cuDNN and
// every exporter use).
enum class RecurrentActivation { Sigmoid, Tanh, Relu };

struct RecurrentAttributes {
  RecurrentCell cell = RecurrentCell::Gru;
  LstmDirection direction = LstmDirection::Forward;
  int64_t hidden_size = 0;  // 0 when the attribute is absent: taken from R's shape
  RnnLayout layout = RnnLayout::SeqMajor;
  bool has_clip = false;
  float clip = 0.0f;                 // cell pre-activations clamped to [-clip, clip] when has_clip
  bool linear_before_reset = false;  // GRU: r ⊙ (H·Rh^T + Rbh) instead of (r ⊙ H)·Rh^T + Rbh
  // RNN: f of each direction (size num_directions). GRU: unused (always Sigmoid, Tanh).
  std::vector<RecurrentActivation> activations;

  int64_t num_directions() const { return direction == LstmDirection::Bidirectional ? 2 : 1; }
  int64_t gates() const { return cell == RecurrentCell::Gru ? 3 : 1; }
};

// Parses and validates the attributes of a GRU or RNN node; UnsupportedModelError (activations
// outside the list above, activation_alpha/beta) or InvalidModelError, naming the node.
RecurrentAttributes parse_recurrent_attributes(const Node& node);

// Reads the sizes from the input types and checks every present input's shape and dtype
// (InvalidModelError with the shapes in the message). LstmDims' fields mean the same here.
LstmDims recurrent_dims(const Node& node, const RecurrentAttributes& attrs,
                        const std::vector<ValueInfo>& inputs);

}  // namespace dnnx
