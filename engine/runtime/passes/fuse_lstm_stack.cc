// LSTM -> (Squeeze of the direction axis | Reshape to [seq, batch, H]) -> LSTM -> ... => one
// LSTMStack node (ops/rnn/lstm_stack.h). ONNX has one layer per LSTM node, so a 4-layer LSTM is four
// nodes with the direction axis dropped between them; cuDNN runs all layers in one call
// (cudnnRNNForward with numLayers = 4) and overlaps them, layer l+1 starting on step t as soon as
// layer l has finished it (what PyTorch's nn.LSTM(num_layers=4) runs). Fuses only where the
// backend runs LSTMStack (not on the CPU).
//
// Every LSTM of the chain: forward, layout 0, no clip, input_forget 0, no sequence_lens, initial
// states or peepholes, constant W and R (and B when present), one hidden size for all. Between
// two: the earlier Y feeds only the Squeeze/Reshape and that only the next LSTM's X; the earlier
// Y_h, Y_c are unused; nothing in between is a graph output. The stack's outputs are the last
// LSTM's own, so the rest of the graph is untouched.
#include <algorithm>
#include <optional>

#include "runtime/passes/rewrite.h"
#include "ops/rnn/lstm_stack.h"

namespace dnnx {

namespace {

using Types = std::map<std::string, TensorInfo>;

bool unused(const Graph& graph, const std::string& value) {
  if (value.empty()) return true;
  if (std::find(graph.outputs.begin(), graph.outputs.end(), value) != graph.outputs.end()) return false;
  return std::none_of(graph.nodes.begin(), graph.nodes.end(), [&](const Node& n) {
    return std::find(n.inputs.begin(), n.inputs.end(), value) != n.inputs.end();
  });
}

// An LSTM that can be one layer of a stack (the attribute checks of ops/rnn/lstm.cc have passed).
bool stackable(const Graph& graph, const Node& node) {
  if (node.op_type != "LSTM" || node.attr_string("direction", "forward") != "forward" ||
      node.attr_int("layout", 0) != 0 || node.has_attr("clip") || node.attr_int("input_forget", 0) != 0) {
    return false;
  }
  for (size_t i = kLstmSequenceLens; i <= kLstmP; ++i) {
    if (node.has_input(i)) return false;
  }
  return find_constant(graph, node.inputs[kLstmW]) && find_constant(graph, node.inputs[kLstmR]) &&
         (!node.has_input(kLstmB) || find_constant(graph, node.inputs[kLstmB]));
}

int64_t hidden_of(const Graph& graph, const Node& lstm) {
  return find_constant(graph, lstm.inputs[kLstmR])->info.shape.back();  // R [1, 4H, H]
}

// One dim of a shape for every value the graph's symbolic input dims may take: a number, or one
// of the two dims that follow them (seq, batch).
struct Dim {
  enum Kind { Fixed, Seq, Batch } kind = Fixed;
  int64_t value = 0;  // when Fixed
  bool operator==(const Dim& o) const { return kind == o.kind && (kind != Fixed || value == o.value); }
};

// The value types twice, symbolic input dims taken as 1 and as 2: a dim that differs follows
// them. Without a second answer (shape inference refuses 2) every seq and batch counts as symbolic.
struct TypesTwice {
  Types one;
  std::optional<Types> two;

  Dim dim(const std::string& value, size_t axis, Dim::Kind kind) const {
    const int64_t v = one.at(value).shape[axis];
    if (two && two->at(value).shape[axis] == v) return Dim{Dim::Fixed, v};
    return Dim{kind, 0};
  }
};

// Whether a Reshape to `target` turns Y [seq, 1, batch, H] into [seq, batch, H] for every
// seq and batch the graph admits: each entry is a number, 0 (copy that axis of Y) or -1 (what is
// left; right when the other two are right, as the element counts agree).
bool reshapes_to_seq_batch_hidden(const std::vector<int64_t>& target, const std::vector<Dim>& y) {
  if (target.size() != 3) return false;
  const Dim want[3] = {y[0], y[2], y[3]};
  int wildcards = 0;
  for (size_t p = 0; p < 3; ++p) {
    if (target[p] == -1) {
      ++wildcards;
      continue;
    }
    const Dim got = target[p] == 0 ? y[p] : Dim{Dim::Fixed, target[p]};
    if (!(got == want[p])) return false;
  }
  return wildcards <= 1;
}

// Whether `drop` (a Squeeze or Reshape of the LSTM's Y) leaves [seq, batch, H].
bool drops_direction_axis(const Graph& graph, const TypesTwice& types, const Node& drop) {
  if (drop.outputs.size() != 1 || drop.inputs.empty()) return false;
  if (drop.op_type == "Squeeze") {
    std::vector<int64_t> axes;
    if (drop.opset < 13) {
      axes = drop.attr_ints("axes", {});
    } else if (drop.has_input(1)) {
      const ConstTensor* c = find_constant(graph, drop.inputs[1]);
      if (!c) return false;
      axes = c->to_int64();
    }
    return axes.size() == 1 && (axes[0] == 1 || axes[0] == -3);  // Y has rank 4
  }
  if (drop.op_type != "Reshape" || drop.attr_int("allowzero", 0) != 0 || !drop.has_input(1)) return false;
  const ConstTensor* shape = find_constant(graph, drop.inputs[1]);
  if (!shape) return false;
  const std::string& y = drop.inputs[0];
  const std::vector<Dim> y_dims = {types.dim(y, 0, Dim::Seq), Dim{Dim::Fixed, 1}, types.dim(y, 2, Dim::Batch),
                                   types.dim(y, 3, Dim::Fixed)};
  return reshapes_to_seq_batch_hidden(shape->to_int64(), y_dims);
}

struct Link {
  size_t drop = 0;  // the Squeeze/Reshape
  size_t lstm = 0;  // the next layer
};

// The layer after `lstm` (at index `at`), when the two can be one stack.
std::optional<Link> next_layer(const Graph& graph, const TypesTwice& types, size_t at) {
  const Node& lstm = graph.nodes[at];
  if (!lstm.has_output(kLstmY)) return std::nullopt;
  for (size_t o : {size_t{kLstmYH}, size_t{kLstmYC}}) {
    if (o < lstm.outputs.size() && !unused(graph, lstm.outputs[o])) return std::nullopt;
  }
  const int d = sole_consumer(graph, lstm.outputs[kLstmY]);
  if (d < 0 || graph.nodes[d].inputs[0] != lstm.outputs[kLstmY]) return std::nullopt;
  const Node& drop = graph.nodes[d];
  if (!drops_direction_axis(graph, types, drop)) return std::nullopt;
  const int n = sole_consumer(graph, drop.outputs[0]);
  if (n < 0) return std::nullopt;
  const Node& next = graph.nodes[n];
  if (!stackable(graph, next) || next.inputs[kLstmX] != drop.outputs[0] ||
      hidden_of(graph, next) != hidden_of(graph, lstm)) {
    return std::nullopt;
  }
  return Link{static_cast<size_t>(d), static_cast<size_t>(n)};
}

// The LSTMStack node for the chain `layers` (node indices, first to last).
Node stack_node(const Graph& graph, const std::vector<size_t>& layers) {
  const Node& first = graph.nodes[layers.front()];
  Node stack;
  stack.name = first.name;
  stack.op_type = kLstmStackOp;
  stack.opset = first.opset;
  stack.inputs = {first.inputs[kLstmX]};
  std::vector<std::string> names;
  for (size_t i : layers) {
    const Node& lstm = graph.nodes[i];
    for (LstmInput which : {kLstmW, kLstmR, kLstmB}) {
      stack.inputs.push_back(lstm.has_input(which) ? lstm.inputs[which] : "");
    }
    names.push_back(lstm.name);
  }
  stack.outputs = graph.nodes[layers.back()].outputs;
  stack.attrs["hidden_size"] = hidden_of(graph, first);
  stack.attrs["layer_names"] = names;
  return stack;
}

TypesTwice types_twice(const Graph& graph) {
  TypesTwice types{value_types(graph, 1), std::nullopt};
  try {
    types.two = value_types(graph, 2);
  } catch (const std::exception&) {
    // a model whose shapes hold for symbolic dims of 1 only: every seq and batch stays symbolic
  }
  return types;
}

}  // namespace

int fuse_lstm_stack(Graph& graph, const PassOptions& options) {
  const auto is_lstm = [](const Node& n) { return n.op_type == "LSTM"; };
  if (std::count_if(graph.nodes.begin(), graph.nodes.end(), is_lstm) < 2) return 0;
  const TypesTwice types = types_twice(graph);
  std::vector<bool> dead(graph.nodes.size(), false);
  int fused = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (dead[i] || !stackable(graph, graph.nodes[i])) continue;
    std::vector<size_t> layers{i}, drops;
    while (const std::optional<Link> link = next_layer(graph, types, layers.back())) {
      drops.push_back(link->drop);
      layers.push_back(link->lstm);
    }
    if (layers.size() < 2) continue;
    Node stack = stack_node(graph, layers);
    if (!backend_can_run(options, stack)) continue;
    // At the last layer's place: X comes before the first, the outputs' readers after the last.
    for (size_t k = 0; k + 1 < layers.size(); ++k) dead[layers[k]] = true;
    for (size_t k : drops) dead[k] = true;
    graph.nodes[layers.back()] = std::move(stack);
    ++fused;
  }
  erase_nodes(graph, dead);
  return fused;
}

}  // namespace dnnx
