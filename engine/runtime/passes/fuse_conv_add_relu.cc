// Conv -> Add(z) -> Relu => Conv+Add+Relu: the residual join of a ResNet block as one layer, so
// that a backend may add the residual and apply the Relu in the conv's epilogue (CUDA: one
// cudnnConvolutionBiasActivationForward, y = relu(conv(x) + z + b); CPU: the conv kernel's
// epilogue, per output tile). Only when the Conv's output feeds the Add alone, the Add's feeds
// the Relu alone, neither is a graph output, z has the conv output's shape for every size of the
// symbolic dims (no broadcast), and the backend registers the fused op. The fused node
// takes the Add's place in the order: z may be computed after the Conv (a downsample branch).
// Then, where z is a plain Conv's output read by the join alone (ResNet's downsample branch), that
// Conv's bias moves into the join's: relu(conv1 + b1 + (conv2 + b2)) = relu(conv1 + conv2 +
// (b1 + b2)), summed once here, so the downsample conv writes its output once instead of adding
// its bias in a second pass (which cuDNN needs outside IMPLICIT_PRECOMP_GEMM).
#include "runtime/passes/rewrite.h"

namespace dnnx {

namespace {

constexpr size_t kBiasInput = 2;
constexpr size_t kResidualInput = 3;

// Whether `a` and `b` have one shape however the symbolic dims are sized (tried at 1 and 2).
bool same_shape(const std::map<std::string, TensorInfo>& at1, const std::map<std::string, TensorInfo>& at2,
                const std::string& a, const std::string& b) {
  for (const auto* types : {&at1, &at2}) {
    auto ia = types->find(a), ib = types->find(b);
    if (ia == types->end() || ib == types->end() || ia->second.shape != ib->second.shape ||
        ia->second.dtype != DType::Float32 || ib->second.dtype != DType::Float32) {
      return false;
    }
  }
  return true;
}

const ConstTensor* float_vector(const Graph& graph, const Node& node, size_t i) {
  if (!node.has_input(i)) return nullptr;
  const ConstTensor* c = find_constant(graph, node.inputs[i]);
  return c && c->info.dtype == DType::Float32 && c->info.shape.size() == 1 ? c : nullptr;
}

// The downsample bias moved into the join (see above); returns how many moved.
int fold_residual_biases(Graph& graph) {
  int folded = 0;
  for (size_t j = 0; j < graph.nodes.size(); ++j) {
    if (graph.nodes[j].op_type != "Conv+Add+Relu") continue;
    const std::string z = graph.nodes[j].inputs[kResidualInput];
    if (sole_consumer(graph, z) != static_cast<int>(j)) continue;
    for (Node& producer : graph.nodes) {
      if (producer.op_type != "Conv" || producer.outputs.size() != 1 || producer.outputs[0] != z) continue;
      const ConstTensor* b2 = float_vector(graph, producer, kBiasInput);
      Node& join = graph.nodes[j];
      const ConstTensor* b1 = float_vector(graph, join, kBiasInput);
      if (!b2 || (join.has_input(kBiasInput) && (!b1 || b1->info.shape != b2->info.shape))) break;
      std::vector<float> sum(b2->as<float>(), b2->as<float>() + b2->info.shape[0]);
      for (size_t k = 0; b1 && k < sum.size(); ++k) sum[k] += b1->as<float>()[k];
      join.inputs[kBiasInput] = add_constant(graph, join.name + "/residual_bias", b2->info.shape, std::move(sum));
      producer.inputs.resize(kBiasInput);
      ++folded;
      break;
    }
  }
  return folded;
}

}  // namespace

int fuse_conv_add_relu(Graph& graph, const PassOptions& options) {
  std::map<std::string, TensorInfo> at1, at2;
  bool typed = false;
  std::vector<bool> dead(graph.nodes.size(), false);
  int fused = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& conv = graph.nodes[i];
    if (dead[i] || conv.op_type != "Conv" || conv.outputs.size() != 1 || !conv.has_output(0)) continue;
    const int a = sole_consumer(graph, conv.outputs[0]);
    if (a < 0 || dead[a] || graph.nodes[a].op_type != "Add" || graph.nodes[a].inputs.size() != 2) continue;
    const Node& add = graph.nodes[a];
    if (add.inputs[0] == add.inputs[1]) continue;
    const std::string& z = add.inputs[0] == conv.outputs[0] ? add.inputs[1] : add.inputs[0];
    const int r = sole_consumer(graph, add.outputs[0]);
    if (r < 0 || dead[r] || graph.nodes[r].op_type != "Relu") continue;
    if (!typed) {
      at1 = value_types(graph, 1);
      at2 = value_types(graph, 2);
      typed = true;
    }
    if (!same_shape(at1, at2, conv.outputs[0], z)) continue;
    Node merged = conv;
    merged.op_type = "Conv+Add+Relu";
    merged.inputs.resize(kBiasInput + 1);  // "" where the Conv has no bias
    merged.inputs.push_back(z);
    merged.outputs = graph.nodes[r].outputs;
    if (!backend_can_run(options, merged)) continue;
    graph.nodes[a] = std::move(merged);
    dead[i] = dead[r] = true;
    ++fused;
  }
  erase_nodes(graph, dead);
  return fused + (fused > 0 ? fold_residual_biases(graph) : 0);
}

}  // namespace dnnx
