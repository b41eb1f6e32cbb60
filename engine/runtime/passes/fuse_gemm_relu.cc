// Gemm -> Relu => Gemm+Relu: the Relu runs over Y right after the sgemm (cuBLASLt's ReLU
// epilogue on CUDA). Only when the Gemm's output feeds the Relu alone and is no graph output.
#include "runtime/passes/rewrite.h"

namespace dnnx {

int fuse_gemm_relu(Graph& graph, const PassOptions& options) { return fuse_with_relu(graph, options, "Gemm"); }

}  // namespace dnnx
