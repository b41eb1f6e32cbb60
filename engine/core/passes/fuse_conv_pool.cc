// Conv (or Conv+Relu) -> MaxPool => Conv+MaxPool (Conv+Relu+MaxPool): one layer, so that a
// backend may compute each pooled output straight from the input, with no pass over the conv's
// whole output in memory (the CUDA backend does for small convolutions, backends/cuda/conv_pool_cuda.cc,
// and runs the pair as two library calls otherwise). Only when the conv's output feeds the
// MaxPool alone and is no graph output, and only where the backend registers the fused op: the
// CPU keeps the pair. Runs after fuse_conv_relu, so Conv -> Relu -> MaxPool ends as one layer.
#include "core/passes/rewrite.h"
#include "ops/conv_pool.h"

namespace dnnx {

int fuse_conv_pool(Graph& graph, const PassOptions& options) {
  std::vector<bool> dead(graph.nodes.size(), false);
  int fused = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& conv = graph.nodes[i];
    if ((conv.op_type != "Conv" && conv.op_type != "Conv+Relu") || conv.outputs.size() != 1 || !conv.has_output(0)) {
      continue;
    }
    const int c = sole_consumer(graph, conv.outputs[0]);
    if (c < 0 || dead[c]) continue;
    const Node& pool = graph.nodes[c];
    if (pool.op_type != "MaxPool" || pool.inputs.size() != 1 || pool.has_output(1)) continue;
    Node merged = join_conv_pool(conv, pool);
    if (!backend_can_run(options, merged)) continue;
    graph.nodes[i] = std::move(merged);
    dead[c] = true;
    ++fused;
  }
  erase_nodes(graph, dead);
  return fused;
}

}  // namespace dnnx
