// Conv -> an activation the CPU conv kernels apply on each output tile (Note [conv activation
// epilogue] in backends/cpu/conv/conv_activation_cpu.cc), as one node, where the backend has it:
//   Conv -> Clip (constant scalar bounds: ReLU6, ...)   => "Conv+Clip" (attrs clip_min, clip_max)
//   Conv -> HardSwish                                    => "Conv+HardSwish"
//   Conv -> y, Sigmoid(y) -> s, Mul(y, s) (SiLU)         => "Conv+Swish"
// The fused node keeps the Conv's inputs and attributes (and name) and writes the last node's
// outputs. Only where the conv's output feeds the activation alone (SiLU: its Sigmoid and Mul
// alone, the Sigmoid's output the Mul alone) and is no graph output.
#include <algorithm>
#include <cstring>
#include <limits>

#include "runtime/passes/rewrite.h"

namespace dnnx {

namespace {

constexpr int kClipBoundsAsInputsOpset = 11;

// A Clip bound: the attribute (opset < 11) or the constant scalar float32 input `i`; the type's
// limit when absent; false when the bound is not known at load (a computed input).
bool clip_bound(const Graph& graph, const Node& clip, size_t i, const char* attr, float fallback, float& out) {
  out = fallback;
  if (clip.opset < kClipBoundsAsInputsOpset) {
    if (clip.has_attr(attr)) out = clip.attr_float(attr, fallback);
    return true;
  }
  if (!clip.has_input(i)) return true;
  const ConstTensor* c = find_constant(graph, clip.inputs[i]);
  if (!c || c->info.dtype != DType::Float32 || c->data.size() != sizeof(float)) return false;
  std::memcpy(&out, c->data.data(), sizeof(float));
  return true;
}

// The nodes reading `value` (a node reading it twice counted once), or {} when it is a graph output.
std::vector<size_t> consumers(const Graph& graph, const std::string& value) {
  if (std::find(graph.outputs.begin(), graph.outputs.end(), value) != graph.outputs.end()) return {};
  std::vector<size_t> out;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const auto& ins = graph.nodes[i].inputs;
    if (std::find(ins.begin(), ins.end(), value) != ins.end()) out.push_back(i);
  }
  return out;
}

// Conv -> Sigmoid and Mul(y, s) => Conv+Swish; returns the merges made.
int fuse_conv_silu(Graph& graph, const PassOptions& options) {
  std::vector<bool> dead(graph.nodes.size(), false);
  int merged_count = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& conv = graph.nodes[i];
    if (dead[i] || conv.op_type != "Conv" || conv.outputs.size() != 1) continue;
    const std::string& y = conv.outputs[0];
    const std::vector<size_t> users = consumers(graph, y);
    if (users.size() != 2) continue;
    size_t sig = users[0], mul = users[1];
    if (graph.nodes[sig].op_type != "Sigmoid") std::swap(sig, mul);
    const Node& s = graph.nodes[sig];
    const Node& m = graph.nodes[mul];
    if (dead[sig] || dead[mul] || s.op_type != "Sigmoid" || m.op_type != "Mul" || s.inputs.size() != 1 ||
        s.outputs.size() != 1 || m.inputs.size() != 2)
      continue;
    const bool reads_both = (m.inputs[0] == y && m.inputs[1] == s.outputs[0]) ||
                            (m.inputs[1] == y && m.inputs[0] == s.outputs[0]);
    if (!reads_both || sole_consumer(graph, s.outputs[0]) != static_cast<int>(mul)) continue;
    Node merged = conv;
    merged.op_type = "Conv+Swish";
    merged.outputs = m.outputs;
    if (!backend_can_run(options, merged)) continue;
    graph.nodes[i] = std::move(merged);
    dead[sig] = dead[mul] = true;
    ++merged_count;
  }
  if (merged_count > 0) erase_nodes(graph, dead);
  return merged_count;
}

}  // namespace

int fuse_conv_activation(Graph& graph, const PassOptions& options) {
  const int pairs = fuse_with_sole_consumer(
      graph, options, [](const Node& n) { return n.op_type == "Conv"; },
      [&](const Node& producer, const Node& consumer) -> std::optional<Node> {
        Node merged = producer;
        merged.outputs = consumer.outputs;
        if (consumer.op_type == "HardSwish") {
          merged.op_type = "Conv+HardSwish";
          return merged;
        }
        if (consumer.op_type != "Clip" || consumer.inputs.empty() || consumer.inputs[0] != producer.outputs[0])
          return std::nullopt;
        float lo = 0.0f, hi = 0.0f;
        if (!clip_bound(graph, consumer, 1, "min", std::numeric_limits<float>::lowest(), lo) ||
            !clip_bound(graph, consumer, 2, "max", std::numeric_limits<float>::max(), hi))
          return std::nullopt;
        merged.op_type = "Conv+Clip";
        merged.attrs["clip_min"] = lo;
        merged.attrs["clip_max"] = hi;
        return merged;
      });
  return pairs + fuse_conv_silu(graph, options);
}

}  // namespace dnnx
