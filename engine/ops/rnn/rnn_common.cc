// The attributes and inputs LSTM, GRU and RNN share (ops/rnn/rnn_common.h).
#include "ops/rnn/rnn_common.h"

#include <algorithm>
#include <cctype>

namespace dnnx {

namespace {

constexpr int kLayoutOpset = 14;  // the first LSTM/GRU/RNN version with the `layout` attribute

// Positions shared by the three ops (LstmInput and RecurrentInput agree on them).
enum : size_t { kX = 0, kW = 1, kR = 2, kB = 3, kSequenceLens = 4, kInitialH = 5 };

void expect_shape(const Node& node, const TensorInfo& info, const Shape& want, const char* what) {
  if (info.shape != want) {
    node_fail<InvalidModelError>(node, std::string(what) + " has shape " + shape_str(info.shape) +
                                           ", expected " + shape_str(want));
  }
}

}  // namespace

bool same_activation_name(const std::string& a, const std::string& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  });
}

std::string joined_names(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

LstmDirection parse_rnn_direction(const Node& node) {
  const std::string d = node.attr_string("direction", "forward");
  if (d == "forward") return LstmDirection::Forward;
  if (d == "reverse") return LstmDirection::Reverse;
  if (d == "bidirectional") return LstmDirection::Bidirectional;
  node_fail<InvalidModelError>(node, "direction '" + d + "' is not one of forward, reverse, bidirectional");
}

RnnLayout parse_rnn_layout(const Node& node) {
  if (node.has_attr("layout") && node.opset < kLayoutOpset) {
    node_fail<InvalidModelError>(node, "attribute 'layout' needs opset " + std::to_string(kLayoutOpset) +
                                           " or later (model has " + std::to_string(node.opset) + ")");
  }
  const int64_t layout = node.attr_int("layout", 0);
  if (layout != static_cast<int64_t>(RnnLayout::SeqMajor) && layout != static_cast<int64_t>(RnnLayout::BatchMajor)) {
    node_fail<InvalidModelError>(node, "layout must be 0 or 1, got " + std::to_string(layout));
  }
  return static_cast<RnnLayout>(layout);
}

int64_t parse_rnn_hidden_size(const Node& node) {
  const int64_t h = node.attr_int("hidden_size", 0);
  if (node.has_attr("hidden_size") && h <= 0) {
    node_fail<InvalidModelError>(node, "hidden_size must be positive, got " + std::to_string(h));
  }
  return h;
}

void parse_rnn_clip(const Node& node, bool* has_clip, float* clip) {
  *has_clip = node.has_attr("clip");
  *clip = node.attr_float("clip", 0.0f);
  if (*has_clip && !(*clip > 0.0f)) {
    node_fail<InvalidModelError>(node, "clip must be positive, got " + std::to_string(*clip));
  }
}

void refuse_activation_parameters(const Node& node) {
  for (const char* key : {"activation_alpha", "activation_beta"}) {
    if (!node.attr_floats(key, {}).empty()) {
      node_fail<UnsupportedModelError>(node, std::string("attribute '") + key +
                                                 "' is not supported (the supported activations take no "
                                                 "parameters)");
    }
  }
}

Shape rnn_state_shape(const LstmDims& d, RnnLayout layout) {
  return layout == RnnLayout::BatchMajor ? Shape{d.batch, d.num_dir, d.hidden} : Shape{d.num_dir, d.batch, d.hidden};
}

Shape rnn_y_shape(const LstmDims& d, RnnLayout layout) {
  return layout == RnnLayout::BatchMajor ? Shape{d.batch, d.seq, d.num_dir, d.hidden}
                                         : Shape{d.seq, d.num_dir, d.batch, d.hidden};
}

void check_optional_rnn_input(const Node& node, const std::vector<ValueInfo>& inputs, size_t i,
                              const Shape& want, const char* what) {
  if (i >= inputs.size() || !inputs[i].present) return;
  require_float(node, inputs[i].info, what);
  expect_shape(node, inputs[i].info, want, what);
}

LstmDims rnn_dims(const Node& node, RnnLayout layout, int64_t num_dir, int64_t hidden_size, int64_t gates,
                  const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, kX, "X");
  const TensorInfo& w = require_input(node, inputs, kW, "W");
  const TensorInfo& r = require_input(node, inputs, kR, "R");
  require_float(node, x, "input X");
  require_float(node, w, "input W");
  require_float(node, r, "input R");
  if (x.shape.size() != 3) {
    node_fail<InvalidModelError>(node, "input X must have rank 3, got shape " + shape_str(x.shape));
  }
  if (r.shape.size() != 3) {
    node_fail<InvalidModelError>(node, "input R must have rank 3, got shape " + shape_str(r.shape));
  }

  LstmDims d;
  const bool batch_major = layout == RnnLayout::BatchMajor;
  d.seq = x.shape[batch_major ? 1 : 0];
  d.batch = x.shape[batch_major ? 0 : 1];
  d.input = x.shape[2];
  d.num_dir = num_dir;
  d.hidden = hidden_size > 0 ? hidden_size : r.shape[2];
  const int64_t h = d.hidden;
  if (h <= 0) node_fail<InvalidModelError>(node, "hidden size must be positive, got " + std::to_string(h));

  expect_shape(node, w, {num_dir, gates * h, d.input}, "input W");
  expect_shape(node, r, {num_dir, gates * h, h}, "input R");
  check_optional_rnn_input(node, inputs, kB, {num_dir, 2 * gates * h}, "input B");
  check_optional_rnn_input(node, inputs, kInitialH, rnn_state_shape(d, layout), "input initial_h");
  if (kSequenceLens < inputs.size() && inputs[kSequenceLens].present) {
    const TensorInfo& lens = inputs[kSequenceLens].info;
    if (lens.dtype != DType::Int32) {
      node_fail<InvalidModelError>(node, std::string("input sequence_lens must be int32, got ") +
                                             dtype_name(lens.dtype));
    }
    expect_shape(node, lens, {d.batch}, "input sequence_lens");
  }
  return d;
}

}  // namespace dnnx
