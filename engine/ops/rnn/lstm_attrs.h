// LSTM's ONNX meaning, written once (ops/rnn/lstm.cc) and shared by every backend's kernel:
// the parsed attributes, the input/output positions and the sizes read from the input types.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ops/op.h"

namespace dnnx {

// Positions of the node's inputs and outputs (ONNX order; every one but X, W, R is optional).
enum LstmInput : size_t {
  kLstmX = 0,             // [seq, batch, input] (layout 0) or [batch, seq, input] (layout 1)
  kLstmW = 1,             // [num_dir, 4H, input], gates in ONNX order i, o, f, c
  kLstmR = 2,             // [num_dir, 4H, H]
  kLstmB = 3,             // [num_dir, 8H]: W biases (i, o, f, c) then R biases (i, o, f, c)
  kLstmSequenceLens = 4,  // [batch] int32
  kLstmInitialH = 5,      // [num_dir, batch, H] (layout 0) or [batch, num_dir, H] (layout 1)
  kLstmInitialC = 6,      // same shape as initial_h
  kLstmP = 7,             // [num_dir, 3H] peepholes in order i, o, f
};
enum LstmOutput : size_t {
  kLstmY = 0,   // [seq, num_dir, batch, H] (layout 0) or [batch, seq, num_dir, H] (layout 1)
  kLstmYH = 1,  // [num_dir, batch, H] (layout 0) or [batch, num_dir, H] (layout 1)
  kLstmYC = 2,  // same shape as Y_h
};

enum class LstmDirection { Forward, Reverse, Bidirectional };

// Which axis of X, Y, initial_h/c and Y_h/Y_c comes first (the ONNX `layout` attribute).
enum class RnnLayout { SeqMajor = 0, BatchMajor = 1 };

struct LstmAttributes {
  LstmDirection direction = LstmDirection::Forward;
  int64_t hidden_size = 0;  // 0 when the attribute is absent: taken from R's shape
  RnnLayout layout = RnnLayout::SeqMajor;
  bool has_clip = false;
  float clip = 0.0f;          // gate pre-activations are clamped to [-clip, clip] when has_clip
  bool input_forget = false;  // couple the gates: f = 1 - i

  int64_t num_directions() const { return direction == LstmDirection::Bidirectional ? 2 : 1; }
};

// The sizes of one LSTM call, checked against every present input.
struct LstmDims {
  int64_t seq = 0;
  int64_t batch = 0;
  int64_t input = 0;
  int64_t hidden = 0;
  int64_t num_dir = 0;
};

// Parses and validates the attributes; UnsupportedModelError (activations other than the
// defaults, activation_alpha/beta) or InvalidModelError, naming the node.
LstmAttributes parse_lstm_attributes(const Node& node);

// Reads the sizes from the input types and checks every input's shape and dtype
// (InvalidModelError with the shapes in the message).
LstmDims lstm_dims(const Node& node, const LstmAttributes& attrs, const std::vector<ValueInfo>& inputs);

}  // namespace dnnx
