// What LSTM, GRU and RNN share in their ONNX form: the direction, layout, hidden_size and clip
// attributes, and the inputs at positions 0-5 (X, W, R, B, sequence_lens, initial_h), which mean
// the same for the three ops but for the number of gates. ops/rnn/lstm.cc and ops/rnn/recurrent.cc parse
// the rest (activations, LSTM's initial_c and peepholes, GRU's linear_before_reset).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ops/rnn/lstm_attrs.h"
#include "ops/op.h"

namespace dnnx {

// ONNX activation names compare case-insensitively (onnx's reference does).
bool same_activation_name(const std::string& a, const std::string& b);
std::string joined_names(const std::vector<std::string>& names);

LstmDirection parse_rnn_direction(const Node& node);
RnnLayout parse_rnn_layout(const Node& node);   // `layout` exists from opset 14 on
int64_t parse_rnn_hidden_size(const Node& node);  // 0 when absent (read from R)
void parse_rnn_clip(const Node& node, bool* has_clip, float* clip);
// activation_alpha/beta: none of the activations dnnx runs takes parameters.
void refuse_activation_parameters(const Node& node);

// Reads seq, batch, input and hidden from X and R, and checks X, W [num_dir, G*H, input],
// R [num_dir, G*H, H], B [num_dir, 2*G*H], sequence_lens [batch] (int32) and initial_h (the state
// shape) for G = `gates`; InvalidModelError with the shapes in the message.
LstmDims rnn_dims(const Node& node, RnnLayout layout, int64_t num_dir, int64_t hidden_size, int64_t gates,
                  const std::vector<ValueInfo>& inputs);

// [num_dir, batch, H] (layout 0) or [batch, num_dir, H] (layout 1): initial_h/c, Y_h, Y_c.
Shape rnn_state_shape(const LstmDims& d, RnnLayout layout);
// [seq, num_dir, batch, H] (layout 0) or [batch, seq, num_dir, H] (layout 1).
Shape rnn_y_shape(const LstmDims& d, RnnLayout layout);

// An omitted optional input passes; a present one must be float of shape `want`.
void check_optional_rnn_input(const Node& node, const std::vector<ValueInfo>& inputs, size_t i,
                              const Shape& want, const char* what);

}  // namespace dnnx
