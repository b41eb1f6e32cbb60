// BatchNormalization -> Relu => BatchNormalization+Relu: one pass over the activation instead of
// two (Note [batchnorm relu]). DenseNet's pre-activation layers (Concat -> BN -> Relu -> Conv)
// have no conv before the BN to fold it into (fold_batchnorm), so each BN and its Relu were two
// full passes over a wide tensor: on the CPU 3.3 + 4.8 ms of DenseNet-121's ~100 ms (batch 1, one
// thread), on CUDA 4.5 + 2.3 ms of its 20.3 ms (tf32, batch 64; bench/RESULTS_CUDA.md, session 15).
// Only an inference BN (training_mode 0, one output) whose output feeds the Relu alone and is no
// graph output; where the backend has the fused kernel (CPU and CUDA).
#include "ops/normalization/batchnorm.h"
#include "runtime/passes/rewrite.h"

namespace dnnx {

int fuse_batchnorm_relu(Graph& graph, const PassOptions& options) {
  return fuse_with_relu(graph, options, "BatchNormalization",
                        [](const Node& n) { return n.domain.empty() && !batchnorm_training(n); });
}

}  // namespace dnnx
