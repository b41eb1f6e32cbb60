// LSTM (ONNX opsets 7 and later; `layout` from opset 14): attributes, input checks and output
// shapes. The backends' kernels read the parsed form (ops/lstm_attrs.h).
#include <algorithm>
#include <cctype>

#include "ops/op.h"
#include "ops/lstm_attrs.h"

namespace dnnx {

namespace {

constexpr int kLayoutOpset = 14;  // the first LSTM version with the `layout` attribute
constexpr int64_t kGates = 4;     // i, o, f, c
constexpr int64_t kPeepholes = 3; // i, o, f

// The only activations dnnx runs: f = Sigmoid, g = Tanh, h = Tanh, for every direction.
const char* const kDefaultActivations[] = {"Sigmoid", "Tanh", "Tanh"};

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
  node_fail<InvalidModelError>(node, "direction '" + d +
                                         "' is not one of forward, reverse, bidirectional");
}

void check_activations(const Node& node, int64_t num_dir) {
  const std::vector<std::string> acts = node.attr_strings("activations", {});
  bool defaults = acts.empty() || static_cast<int64_t>(acts.size()) == 3 * num_dir;
  for (size_t i = 0; defaults && i < acts.size(); ++i) {
    defaults = same_name(acts[i], kDefaultActivations[i % 3]);
  }
  if (!defaults) {
    std::string given;
    for (const auto& a : acts) given += (given.empty() ? "" : ", ") + a;
    node_fail<UnsupportedModelError>(node, "activations [" + given +
                                               "] are not supported (supported: the defaults "
                                               "Sigmoid, Tanh, Tanh for each direction)");
  }
  for (const char* key : {"activation_alpha", "activation_beta"}) {
    if (!node.attr_floats(key, {}).empty()) {
      node_fail<UnsupportedModelError>(node, std::string("attribute '") + key +
                                                 "' is not supported (the default activations "
                                                 "take no parameters)");
    }
  }
}

void expect_shape(const Node& node, const TensorInfo& info, const Shape& want, const char* what) {
  if (info.shape != want) {
    node_fail<InvalidModelError>(node, std::string(what) + " has shape " + shape_str(info.shape) +
                                           ", expected " + shape_str(want));
  }
}

// An omitted optional input passes; a present one must be float32 of shape `want`.
void check_optional(const Node& node, const std::vector<ValueInfo>& inputs, size_t i,
                    const Shape& want, const char* what) {
  if (i >= inputs.size() || !inputs[i].present) return;
  require_float(node, inputs[i].info, what);
  expect_shape(node, inputs[i].info, want, what);
}

}  // namespace

LstmAttributes parse_lstm_attributes(const Node& node) {
  node.expect_only_attrs({"activation_alpha", "activation_beta", "activations", "clip", "direction",
                          "hidden_size", "input_forget", "layout"});
  LstmAttributes a;
  a.direction = parse_direction(node);
  check_activations(node, a.num_directions());

  a.hidden_size = node.attr_int("hidden_size", 0);
  if (node.has_attr("hidden_size") && a.hidden_size <= 0) {
    node_fail<InvalidModelError>(node, "hidden_size must be positive, got " +
                                           std::to_string(a.hidden_size));
  }

  if (node.has_attr("layout") && node.opset < kLayoutOpset) {
    node_fail<InvalidModelError>(node, "attribute 'layout' needs opset " +
                                           std::to_string(kLayoutOpset) + " or later (model has " +
                                           std::to_string(node.opset) + ")");
  }
  const int64_t layout = node.attr_int("layout", 0);
  if (layout != static_cast<int64_t>(RnnLayout::SeqMajor) &&
      layout != static_cast<int64_t>(RnnLayout::BatchMajor)) {
    node_fail<InvalidModelError>(node, "layout must be 0 or 1, got " + std::to_string(layout));
  }
  a.layout = static_cast<RnnLayout>(layout);

  a.has_clip = node.has_attr("clip");
  a.clip = node.attr_float("clip", 0.0f);
  if (a.has_clip && !(a.clip > 0.0f)) {
    node_fail<InvalidModelError>(node, "clip must be positive, got " + std::to_string(a.clip));
  }

  const int64_t input_forget = node.attr_int("input_forget", 0);
  if (input_forget != 0 && input_forget != 1) {
    node_fail<InvalidModelError>(node, "input_forget must be 0 or 1, got " +
                                           std::to_string(input_forget));
  }
  a.input_forget = input_forget == 1;
  return a;
}

LstmDims lstm_dims(const Node& node, const LstmAttributes& attrs, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, kLstmX, "X");
  const TensorInfo& w = require_input(node, inputs, kLstmW, "W");
  const TensorInfo& r = require_input(node, inputs, kLstmR, "R");
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
  const int64_t h = d.hidden;
  if (h <= 0) node_fail<InvalidModelError>(node, "hidden size must be positive, got " + std::to_string(h));

  expect_shape(node, w, {d.num_dir, kGates * h, d.input}, "input W");
  expect_shape(node, r, {d.num_dir, kGates * h, h}, "input R");
  check_optional(node, inputs, kLstmB, {d.num_dir, 2 * kGates * h}, "input B");
  const Shape state = batch_major ? Shape{d.batch, d.num_dir, h} : Shape{d.num_dir, d.batch, h};
  check_optional(node, inputs, kLstmInitialH, state, "input initial_h");
  check_optional(node, inputs, kLstmInitialC, state, "input initial_c");
  check_optional(node, inputs, kLstmP, {d.num_dir, kPeepholes * h}, "input P");

  if (kLstmSequenceLens < inputs.size() && inputs[kLstmSequenceLens].present) {
    const TensorInfo& lens = inputs[kLstmSequenceLens].info;
    if (lens.dtype != DType::Int32) {
      node_fail<InvalidModelError>(node, std::string("input sequence_lens must be int32, got ") +
                                             dtype_name(lens.dtype));
    }
    expect_shape(node, lens, {d.batch}, "input sequence_lens");
  }
  return d;
}

void register_lstm_ops(OpRegistry& r) {
  OpDef def;
  def.validate = [](const Node& node) { parse_lstm_attributes(node); };
  def.infer = [](const Node& node, const std::vector<ValueInfo>& inputs) {
    const LstmAttributes attrs = parse_lstm_attributes(node);
    const LstmDims d = lstm_dims(node, attrs, inputs);
    const bool batch_major = attrs.layout == RnnLayout::BatchMajor;
    const Shape y = batch_major ? Shape{d.batch, d.seq, d.num_dir, d.hidden}
                                : Shape{d.seq, d.num_dir, d.batch, d.hidden};
    const Shape state = batch_major ? Shape{d.batch, d.num_dir, d.hidden}
                                    : Shape{d.num_dir, d.batch, d.hidden};
    const DType t = inputs[kLstmX].info.dtype;  // float32, or float16 under precision="fp16"
    return std::vector<TensorInfo>{{y, t}, {state, t}, {state, t}};
  };
  def.min_opset = 7;
  // Backpropagation through time, as both backends run it, has no clip, no coupled input and
  // forget gates and one sequence length.
  def.untrainable = [](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<bool>&) {
    const LstmAttributes attrs = parse_lstm_attributes(node);
    if (attrs.has_clip) return std::string("training an LSTM with clip is not supported");
    if (attrs.input_forget) return std::string("training an LSTM with input_forget is not supported");
    if (kLstmSequenceLens < inputs.size() && inputs[kLstmSequenceLens].present) {
      return std::string("training an LSTM with sequence_lens is not supported (pad the sequences to one length, "
                         "or drop the input)");
    }
    return std::string();
  };
  r.add("LSTM", std::move(def));
}

}  // namespace dnnx
