// Gemm -> Softmax over the Gemm's columns => Gemm+Softmax: one layer, so that a backend may
// normalise each row as it computes it (the CUDA backend does for small layers,
// backends/cuda/dense/gemm_softmax_cuda.cc: one kernel in place of a GEMM and a cudnnSoftmaxForward,
// and runs the pair otherwise). Only when the Gemm's output feeds the Softmax alone and is no
// graph output, when the Softmax normalises along the last axis (axis 1 or -1 of the 2-D output,
// which every opset reads the same way; axis 0 stays a pair), and only where the backend
// registers the fused op: the CPU keeps the pair. The fused node keeps the Gemm's name, inputs
// and attributes and takes the Softmax's output.
#include "runtime/passes/rewrite.h"

namespace dnnx {

int fuse_gemm_softmax(Graph& graph, const PassOptions& options) {
  return fuse_with_sole_consumer(
      graph, options, [](const Node& n) { return n.op_type == "Gemm"; },
      [](const Node& gemm, const Node& softmax) -> std::optional<Node> {
        if (softmax.op_type != "Softmax") return std::nullopt;
        const int64_t axis = softmax.attr_int("axis", softmax.opset >= 13 ? -1 : 1);
        if (axis != 1 && axis != -1) return std::nullopt;
        Node merged = gemm;
        merged.op_type = "Gemm+Softmax";
        merged.outputs = softmax.outputs;
        return merged;
      });
}

}  // namespace dnnx
