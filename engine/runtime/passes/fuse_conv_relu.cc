// Conv -> Relu => Conv+Relu: the backend's conv kernel applies the Relu in its epilogue, while
// each output tile is still in cache, instead of a second pass over the whole activation.
// Only when the Conv's output feeds the Relu alone and is no graph output.
#include "runtime/passes/rewrite.h"

namespace dnnx {

int fuse_conv_relu(Graph& graph, const PassOptions& options) { return fuse_with_relu(graph, options, "Conv"); }

}  // namespace dnnx
