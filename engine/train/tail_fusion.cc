#include "train/tail_fusion.h"

#include "runtime/passes/passes.h"
#include "runtime/kernel_registry.h"
#include "runtime/passes/rewrite.h"

namespace dnnx {

Graph tail_graph_for(const Graph& tail, const std::vector<Shape>& input_shapes, const Backend& backend,
                     const TailFusions& fusions) {
  Graph g = tail;
  PassOptions options;
  options.can_run = [&](const Node& node) {
    return backend.unsupported_reason(node).empty() && backend.kernels().gradient(node) != nullptr;
  };
  if (fusions.gemm_relu) fuse_gemm_relu(g, options);
  if (!fusions.lstm_stacks) return g;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    g.inputs[i].dims = input_shapes.at(i);
    g.inputs[i].symbols.assign(g.inputs[i].dims.size(), "");
  }
  if (fuse_lstm_stack(g, options) > 0) drop_unused_constants(g);
  return g;
}

}  // namespace dnnx
