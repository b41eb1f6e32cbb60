// GRU and RNN (ONNX opsets 7 and later; `layout` from opset 14): attributes, input checks and
// output shapes. The backends' kernels read the parsed form (ops/recurrent_attrs.h).
#include <algorithm>
#include <cctype>

#include "ops/op.h"
#include "ops/recurrent_attrs.h"

namespace dnnx {

namespace {

constexpr int kLayoutOpset = 14;  // the first GRU/RNN version with the `layout` attribute

bool same_name(const std::string& a, const std::string& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  });
}

LstmDirection parse_direction(const Node& node) {
  const std::string d = node.attr_string("direction", "forward");
  if (d == "forward") return LstmDirection::Forward;
  if (d == "reverse") return LstmDirection::Reverse;
  if (d == "bidirectional") return LstmDirection::Bidirectional;
  node_fail<InvalidModelError>(node, "direction '" + d + "' is not one of forward, reverse, bidirectional");
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// GRU: the only activations dnnx runs are f = Sigmoid, g = Tanh for every direction.
void check_gru_activations(const Node& node, int64_t num_dir) {
  const std::vector<std::string> acts = node.attr_strings("activations", {});
  bool defaults = acts.empty() || static_cast<int64_t>(acts.size()) == 2 * num_dir;
  for (size_t i = 0; defaults && i < acts.size(); ++i) defaults = same_name(acts[i], i % 2 ? "Tanh" : "Sigmoid");
  if (!defaults) {
    node_fail<UnsupportedModelError>(node, "activations [" + joined(acts) +
                                               "] are not supported (supported: the defaults Sigmoid, Tanh "
                                               "for each direction)");
  }
}

// RNN: one activation per direction (one given for a bidirectional node serves both), each
// Tanh, Relu or Sigmoid; Tanh when the attribute is absent.
std::vector<RecurrentActivation> parse_rnn_activations(const Node& node, int64_t num_dir) {
  const std::vector<std::string> acts = node.attr_strings("activations", {"Tanh"});
  if (static_cast<int64_t>(acts.size()) != num_dir && acts.size() != 1) {
    node_fail<InvalidModelError>(node, "activations has " + std::to_string(acts.size()) +
                                           " entries, expected " + std::to_string(num_dir) +
                                           " (one per direction)");
  }
  std::vector<RecurrentActivation> out;
  for (int64_t dir = 0; dir < num_dir; ++dir) {
    const std::string& a = acts[acts.size() == 1 ? 0 : dir];
    if (same_name(a, "Tanh")) out.push_back(RecurrentActivation::Tanh);
    else if (same_name(a, "Relu")) out.push_back(RecurrentActivation::Relu);
    else if (same_name(a, "Sigmoid")) out.push_back(RecurrentActivation::Sigmoid);
    else node_fail<UnsupportedModelError>(node, "activation '" + a + "' is not supported (supported: Tanh, Relu, "
                                                                     "Sigmoid)");
  }
  return out;
}

void expect_shape(const Node& node, const TensorInfo& info, const Shape& want, const char* what) {
  if (info.shape != want) {
    node_fail<InvalidModelError>(node, std::string(what) + " has shape " + shape_str(info.shape) +
                                           ", expected " + shape_str(want));
  }
}

// An omitted optional input passes; a present one must be float of shape `want`.
void check_optional(const Node& node, const std::vector<ValueInfo>& inputs, size_t i, const Shape& want,
                    const char* what) {
  if (i >= inputs.size() || !inputs[i].present) return;
  require_float(node, inputs[i].info, what);
  expect_shape(node, inputs[i].info, want, what);
}

const char* cell_name(const RecurrentAttributes& a) { return a.cell == RecurrentCell::Gru ? "a GRU" : "an RNN"; }

}  // namespace

RecurrentAttributes parse_recurrent_attributes(const Node& node) {
  RecurrentAttributes a;
  a.cell = node.op_type == "GRU" ? RecurrentCell::Gru : RecurrentCell::Rnn;
  if (a.cell == RecurrentCell::Gru) {
    node.expect_only_attrs({"activation_alpha", "activation_beta", "activations", "clip", "direction",
                            "hidden_size", "layout", "linear_before_reset"});
  } else {
    node.expect_only_attrs({"activation_alpha", "activation_beta", "activations", "clip", "direction",
                            "hidden_size", "layout"});
  }
  a.direction = parse_direction(node);
  if (a.cell == RecurrentCell::Gru) {
    check_gru_activations(node, a.num_directions());
  } else {
    a.activations = parse_rnn_activations(node, a.num_directions());
  }
  for (const char* key : {"activation_alpha", "activation_beta"}) {
    if (!node.attr_floats(key, {}).empty()) {
      node_fail<UnsupportedModelError>(node, std::string("attribute '") + key +
                                                 "' is not supported (the supported activations take no "
                                                 "parameters)");
    }
  }

  a.hidden_size = node.attr_int("hidden_size", 0);
  if (node.has_attr("hidden_size") && a.hidden_size <= 0) {
    node_fail<InvalidModelError>(node, "hidden_size must be positive, got " + std::to_string(a.hidden_size));
  }

  if (node.has_attr("layout") && node.opset < kLayoutOpset) {
    node_fail<InvalidModelError>(node, "attribute 'layout' needs opset " + std::to_string(kLayoutOpset) +
                                           " or later (model has " + std::to_string(node.opset) + ")");
  }
  const int64_t layout = node.attr_int("layout", 0);
  if (layout != static_cast<int64_t>(RnnLayout::SeqMajor) && layout != static_cast<int64_t>(RnnLayout::BatchMajor)) {
    node_fail<InvalidModelError>(node, "layout must be 0 or 1, got " + std::to_string(layout));
  }
  a.layout = static_cast<RnnLayout>(layout);

  a.has_clip = node.has_attr("clip");
  a.clip = node.attr_float("clip", 0.0f);
  if (a.has_clip && !(a.clip > 0.0f)) {
    node_fail<InvalidModelError>(node, "clip must be positive, got " + std::to_string(a.clip));
  }

  const int64_t lbr = node.attr_int("linear_before_reset", 0);
  if (lbr != 0 && lbr != 1) {
    node_fail<InvalidModelError>(node, "linear_before_reset must be 0 or 1, got " + std::to_string(lbr));
  }
  a.linear_before_reset = lbr == 1;
  return a;
}

LstmDims recurrent_dims(const Node& node, const RecurrentAttributes& attrs, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, kRecX, "X");
  const TensorInfo& w = require_input(node, inputs, kRecW, "W");
  const TensorInfo& r = require_input(node, inputs, kRecR, "R");
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
  const bool batch_major = attrs.layout == RnnLayout::BatchMajor;
  d.seq = x.shape[batch_major ? 1 : 0];
  d.batch = x.shape[batch_major ? 0 : 1];
  d.input = x.shape[2];
  d.num_dir = attrs.num_directions();
  d.hidden = attrs.hidden_size > 0 ? attrs.hidden_size : r.shape[2];
  const int64_t h = d.hidden, g = attrs.gates();
  if (h <= 0) node_fail<InvalidModelError>(node, "hidden size must be positive, got " + std::to_string(h));

  expect_shape(node, w, {d.num_dir, g * h, d.input}, "input W");
  expect_shape(node, r, {d.num_dir, g * h, h}, "input R");
  check_optional(node, inputs, kRecB, {d.num_dir, 2 * g * h}, "input B");
  const Shape state = batch_major ? Shape{d.batch, d.num_dir, h} : Shape{d.num_dir, d.batch, h};
  check_optional(node, inputs, kRecInitialH, state, "input initial_h");

  if (kRecSequenceLens < inputs.size() && inputs[kRecSequenceLens].present) {
    const TensorInfo& lens = inputs[kRecSequenceLens].info;
    if (lens.dtype != DType::Int32) {
      node_fail<InvalidModelError>(node, std::string("input sequence_lens must be int32, got ") +
                                             dtype_name(lens.dtype));
    }
    expect_shape(node, lens, {d.batch}, "input sequence_lens");
  }
  return d;
}

void register_recurrent_ops(OpRegistry& r) {
  OpDef def;
  def.validate = [](const Node& node) { parse_recurrent_attributes(node); };
  def.infer = [](const Node& node, const std::vector<ValueInfo>& inputs) {
    const RecurrentAttributes attrs = parse_recurrent_attributes(node);
    const LstmDims d = recurrent_dims(node, attrs, inputs);
    const bool batch_major = attrs.layout == RnnLayout::BatchMajor;
    const Shape y = batch_major ? Shape{d.batch, d.seq, d.num_dir, d.hidden}
                                : Shape{d.seq, d.num_dir, d.batch, d.hidden};
    const Shape state = batch_major ? Shape{d.batch, d.num_dir, d.hidden} : Shape{d.num_dir, d.batch, d.hidden};
    const DType t = inputs[kRecX].info.dtype;  // float32, or float16 under precision="fp16"
    return std::vector<TensorInfo>{{y, t}, {state, t}};
  };
  def.min_opset = 7;
  // Backpropagation through time, as the backends run it, has no clip and one sequence length.
  def.untrainable = [](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<bool>&) {
    const RecurrentAttributes attrs = parse_recurrent_attributes(node);
    if (attrs.has_clip) return std::string("training ") + cell_name(attrs) + " with clip is not supported";
    if (kRecSequenceLens < inputs.size() && inputs[kRecSequenceLens].present) {
      return std::string("training ") + cell_name(attrs) +
             " with sequence_lens is not supported (pad the sequences to one length, or drop the input)";
    }
    return std::string();
  };
  r.add("GRU", def);
  r.add("RNN", std::move(def));
}

}  // namespace dnnx
