// Conv -> Add(constant per-channel bias) => one Conv with that bias. Exporters that keep a conv's
// bias as a separate Add (CNTK's, as in the ONNX zoo's mnist-8: Convolution28 -> Plus30 with a
// [8, 1, 1] constant) left a broadcast Add after each conv, and that Add kept the Relu after it
// from fusing into the conv (fuse_conv_relu). Only when the Conv's output feeds the Add alone, W
// is a float32 constant [M, ...], the conv's own bias (if any) is a constant [M], and the Add's
// other operand is a float32 constant that broadcasts along the channel axis alone (its shape,
// padded on the left to the output's rank, is 1 everywhere but axis 1, where it is M or 1). The
// new bias is B[m] + c[m]; the conv kernels add it to each sum, so a result differs from the two
// nodes' by one fp32 rounding at most. Runs first: Conv -> Add -> BatchNormalization then folds
// whole (fold_batchnorm).
#include "runtime/passes/rewrite.h"

namespace dnnx {

namespace {

// c's values as one per output channel (M of them), or nullopt when c does not broadcast along
// the channel axis alone of an output of rank `rank`.
std::optional<std::vector<float>> per_channel(const ConstTensor& c, size_t rank, int64_t filters) {
  const Shape& s = c.info.shape;
  if (c.info.dtype != DType::Float32 || s.size() > rank || rank < 3) return std::nullopt;
  const size_t lead = rank - s.size();  // dims added on the left
  int64_t channels = 1;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t dim = d < lead ? 1 : s[d - lead];
    if (d == 1) {
      if (dim != filters && dim != 1) return std::nullopt;
      channels = dim;
    } else if (dim != 1) {
      return std::nullopt;
    }
  }
  std::vector<float> out(static_cast<size_t>(filters));
  for (int64_t m = 0; m < filters; ++m) out[m] = c.as<float>()[channels == 1 ? 0 : m];
  return out;
}

}  // namespace

int fold_conv_add(Graph& graph, const PassOptions&) {
  std::vector<bool> dead(graph.nodes.size(), false);
  int folded = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& conv = graph.nodes[i];
    if (conv.op_type != "Conv" || !conv.domain.empty() || conv.outputs.size() != 1 || !conv.has_output(0) ||
        conv.inputs.size() < 2) {
      continue;
    }
    const int c = sole_consumer(graph, conv.outputs[0]);
    if (c < 0 || dead[c]) continue;
    const Node& add = graph.nodes[c];
    if (add.op_type != "Add" || !add.domain.empty() || add.inputs.size() != 2 || add.inputs[0] == add.inputs[1]) {
      continue;
    }
    const std::string& other = add.inputs[0] == conv.outputs[0] ? add.inputs[1] : add.inputs[0];
    const ConstTensor* w = find_constant(graph, conv.inputs[1]);
    const ConstTensor* constant = find_constant(graph, other);
    if (!w || w->info.dtype != DType::Float32 || w->info.shape.size() < 3 || !constant) continue;
    const int64_t filters = w->info.shape[0];
    const std::optional<std::vector<float>> bias = per_channel(*constant, w->info.shape.size(), filters);
    if (!bias) continue;
    std::vector<float> sum = *bias;
    if (conv.has_input(2)) {
      const ConstTensor* b = find_constant(graph, conv.inputs[2]);
      if (!b || b->info.dtype != DType::Float32 || b->info.shape != Shape{filters}) continue;
      for (int64_t m = 0; m < filters; ++m) sum[m] += b->as<float>()[m];
    }
    const std::string base = add.name.empty() ? conv.name : add.name;
    const std::string b_name = add_constant(graph, base + ".folded_B", {filters}, std::move(sum));
    Node& folded_conv = graph.nodes[i];
    folded_conv.inputs.resize(3);
    folded_conv.inputs[2] = b_name;
    folded_conv.outputs[0] = graph.nodes[c].outputs[0];
    dead[c] = true;
    ++folded;
  }
  erase_nodes(graph, dead);
  return folded;
}

}  // namespace dnnx
