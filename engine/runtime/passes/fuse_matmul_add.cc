// MatMul -> Add => Gemm: A [M, K] x B [K, N] + C, where B is a constant 2-D matrix and C a
// constant that broadcasts to [N] ([N], [1, N], [1] or a scalar), is Gemm(A, B, C) with
// alpha = beta = 1: one GEMM that starts from the bias (cuBLASLt's bias epilogue on CUDA) instead
// of a MatMul and a broadcast Add. Only when the MatMul's output feeds the Add alone.
//
// Note [rows of a matmul]: A of rank 3 or more, [d0, ..., dr-2, K], is the same bytes as
// [d0 * ... * dr-2, K]: the MatMul is then Reshape(A, [-1, K]) -> Gemm -> Reshape(.., [-1, d1, ...,
// dr-2, N]), the two Reshapes views (no copy), where every dim but d0 is known at load (d0 may
// be the batch). ConvNeXt-T's MLP ([64, 56, 56, 96] x [96, 384] + b at batch 64) spent 4.0 of
// its 21.7 ms fp16 run on CUDA in the 36 broadcast Adds after its MatMuls (H100, 2026-12-05).
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
  std::map<std::string, TensorInfo> types, types2;  // filled on the first candidate (symbolic dims 1 and 2)
  bool typed = false;
  FreshNames fresh(graph);
  std::vector<std::pair<size_t, Node>> inserted;  // (index of a rows Reshape, its Gemm)
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
        types2 = value_types(graph, 2);
      } catch (const Error&) {
        break;  // shapes that do not agree: planning reports it, naming the node
      }
      typed = true;
    }
    auto a = types.find(mm.inputs[0]);
    if (a == types.end() || a->second.shape.size() < 2) continue;
    const Shape& as = a->second.shape;
    const auto a2 = types2.find(mm.inputs[0]);
    bool rows_known = as.size() == 2;  // Note [rows of a matmul]: dims 1 .. r-2 the same at both symbolic sizes
    if (!rows_known && a2 != types2.end() && a2->second.shape.size() == as.size()) {
      rows_known = std::equal(as.begin() + 1, as.end(), a2->second.shape.begin() + 1);
    }
    if (!rows_known) continue;
    Node gemm;
    gemm.name = mm.name;
    gemm.op_type = "Gemm";
    gemm.opset = mm.opset;
    gemm.inputs = {mm.inputs[0], mm.inputs[1], bias};
    gemm.outputs = add.outputs;
    if (!backend_can_run(options, gemm)) continue;
    if (as.size() == 2) {
      graph.nodes[i] = std::move(gemm);
    } else {
      Node rows, back;
      rows.name = mm.name + "/rows";
      back.name = mm.name + "/unrows";
      rows.op_type = back.op_type = "Reshape";
      rows.opset = back.opset = 13;
      rows.inputs = {mm.inputs[0], add_int64_constant(graph, mm.name + "/rows_shape", {-1, as.back()})};
      rows.outputs = {fresh(mm.inputs[0] + "/rows")};
      std::vector<int64_t> out_shape(as.begin(), as.end());
      out_shape[0] = -1;
      out_shape.back() = b->info.shape[1];
      gemm.inputs[0] = rows.outputs[0];
      gemm.outputs = {fresh(add.outputs[0] + "/rows")};
      back.inputs = {gemm.outputs[0], add_int64_constant(graph, mm.name + "/unrows_shape", out_shape)};
      back.outputs = add.outputs;
      if (!backend_can_run(options, rows)) continue;
      graph.nodes[i] = std::move(rows);
      graph.nodes[c] = std::move(back);
      inserted.emplace_back(i, std::move(gemm));
      ++fused;
      continue;
    }
    dead[c] = true;
    ++fused;
  }
  // each Gemm goes right after its rows Reshape (node order is execution order)
  for (auto it = inserted.rbegin(); it != inserted.rend(); ++it) {
    graph.nodes.insert(graph.nodes.begin() + static_cast<std::ptrdiff_t>(it->first) + 1, std::move(it->second));
    dead.insert(dead.begin() + static_cast<std::ptrdiff_t>(it->first) + 1, false);
  }
  erase_nodes(graph, dead);
  return fused;
}

}  // namespace dnnx
