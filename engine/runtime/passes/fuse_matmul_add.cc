// MatMul -> Add => Gemm: A [M, K] x B [K, N] + C, where B is a constant 2-D matrix and C a
// constant that broadcasts to [N] ([N], [1, N], [1] or a scalar), is Gemm(A, B, C) with
// alpha = beta = 1: one sgemm that starts from the bias instead of a MatMul and a broadcast
// Add. Only when A is 2-D and the MatMul's output feeds the Add alone.
#include "runtime/passes/rewrite.h"

namespace dnnx {

namespace {

// C broadcasts to [N] without growing the result: rank <= 2, a leading dim of 1, last dim 1 or N.
bool bias_fits(const ConstTensor* c, int64_t n) {
  if (!c || c->info.dtype != DType::Float32) return false;
  const Shape& s = c->info.shape;
  if (s.size() > 2 || (s.size() == 2 && s[0] != 1)) return false;
  return s.empty() || s.back() == 1 || s.back() == n;
}

}  // namespace

int fuse_matmul_add(Graph& graph, const PassOptions& options) {
  std::vector<bool> dead(graph.nodes.size(), false);
  std::map<std::string, TensorInfo> types;  // filled on the first candidate
  bool typed = false;
  int fused = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& mm = graph.nodes[i];
    if (mm.op_type != "MatMul" || !mm.has_output(0)) continue;
    const ConstTensor* b = find_constant(graph, mm.inputs[1]);
    if (!b || b->info.dtype != DType::Float32 || b->info.shape.size() != 2) continue;
    const int c = sole_consumer(graph, mm.outputs[0]);
    if (c < 0 || graph.nodes[c].op_type != "Add" || dead[c]) continue;
    const Node& add = graph.nodes[c];
    const std::string& bias = add.inputs[0] == mm.outputs[0] ? add.inputs[1] : add.inputs[0];
    if (!bias_fits(find_constant(graph, bias), b->info.shape[1])) continue;
    if (!typed) {
      try {
        types = value_types(graph);
      } catch (const Error&) {
        break;  // shapes that do not agree: planning reports it, naming the node
      }
      typed = true;
    }
    auto a = types.find(mm.inputs[0]);
    if (a == types.end() || a->second.shape.size() != 2) continue;
    Node gemm;
    gemm.name = mm.name;
    gemm.op_type = "Gemm";
    gemm.opset = mm.opset;
    gemm.inputs = {mm.inputs[0], mm.inputs[1], bias};
    gemm.outputs = add.outputs;
    if (!backend_can_run(options, gemm)) continue;
    graph.nodes[i] = std::move(gemm);
    dead[c] = true;
    ++fused;
  }
  erase_nodes(graph, dead);
  return fused;
}

}  // namespace dnnx
