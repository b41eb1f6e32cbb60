// Conv -> Add(z) -> Relu => Conv+Add+Relu: the residual join of a ResNet block as one layer, so
// that a backend may add the residual and apply the Relu in the conv's epilogue (CUDA: one
// cudnnConvolutionBiasActivationForward, y = relu(conv(x) + z + b); CPU: the conv kernel's
// epilogue, per output tile). Only when the Conv's output feeds the Add alone, the Add's feeds
// the Relu alone, neither is a graph output, z has the conv output's shape for every size of the
// symbolic dims (no broadcast), and the backend registers the fused op. The fused node
// takes the Add's place in the order: z may be computed after the Conv (a downsample branch).
#include "core/passes/rewrite.h"

namespace dnnx {

namespace {

constexpr size_t kBiasInput = 2;

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
  return fused;
}

}  // namespace dnnx
