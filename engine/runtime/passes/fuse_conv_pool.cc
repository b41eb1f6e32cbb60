// Conv (or Conv+Relu) -> MaxPool => Conv+MaxPool (Conv+Relu+MaxPool): one layer, so that a
// backend may compute each pooled output straight from the input, with no pass over the conv's
// whole output in memory (the CUDA backend does for small convolutions, backends/cuda/conv/conv_pool_cuda.cc,
// and runs the pair as two library calls otherwise). Only when the conv's output feeds the
// MaxPool alone and is no graph output, and only where the backend registers the fused op: the
// CPU keeps the pair. Runs after fuse_conv_relu, so Conv -> Relu -> MaxPool ends as one layer.
#include "runtime/passes/rewrite.h"
#include "ops/conv/conv_pool.h"

namespace dnnx {

int fuse_conv_pool(Graph& graph, const PassOptions& options) {
  return fuse_with_sole_consumer(
      graph, options, [](const Node& n) { return n.op_type == "Conv" || n.op_type == "Conv+Relu"; },
      [](const Node& conv, const Node& pool) -> std::optional<Node> {
        // MaxPool's optional Indices output has no place in the fused node
        if (pool.op_type != "MaxPool" || pool.inputs.size() != 1 || pool.has_output(1)) return std::nullopt;
        return join_conv_pool(conv, pool);
      });
}

}  // namespace dnnx
