// GELU written out in elementwise nodes => one Gelu node (ONNX opset 20's op, run by the
// backend's Gelu kernel: vector_math.h's erf and tanh on the CPU), where the backend has it.
// Exporters before opset 20 spell it out (Note [gelu spellings]):
//   erf form   Div(x, sqrt 2) | Mul(x, 1/sqrt 2) -> Erf -> Add(1) -> Mul(x, .) -> Mul(0.5)
//              or with the 0.5 first: Mul(Mul(x, 0.5), Add(Erf(..), 1))  (ViT, TorchScript export)
//   tanh form  Pow(x, 3) -> Mul(0.044715) -> Add(x) -> Mul(sqrt(2/pi)) -> Tanh -> Add(1)
//              -> Mul(Mul(x, 0.5), .) | Mul(x, .) -> Mul(0.5)                     (GPT-2)
// Every value inside the chain must feed the next node alone and be no graph output; x may have
// other readers. The constants must be these values to float precision (relative 1e-6), the
// binary nodes' operands in either order. The Gelu takes the last node's place and outputs.
//
// Note [gelu spellings]: the Gelu kernel computes 0.5 x (1 + erf(x * (1/sqrt 2))) (or the tanh
// form), one rounding per step differing from the chain's (a division by sqrt 2 in place of the
// multiply, x*x*x in place of Pow): a few ulp, inside the float32 tolerances the tests use
// against onnxruntime, which fuses the same chains (its Gelu / BiasGelu / FastGelu fusions).
// ViT-Tiny: 5 nodes x 12 layers of [197, 768] -> 12 Gelu layers; GPT-2: 8 nodes -> 1, twice.
#include <cmath>
#include <cstring>

#include "runtime/passes/rewrite.h"

namespace dnnx {

namespace {

constexpr int kGeluOpset = 20;

struct Chain {
  const Graph& graph;
  std::map<std::string, size_t> producer;  // value -> index of the node writing it

  explicit Chain(const Graph& g) : graph(g) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      for (const std::string& out : g.nodes[i].outputs) {
        if (!out.empty()) producer[out] = i;
      }
    }
  }

  // The float32 scalar constant `name` close to `want` (relative 1e-6).
  bool is_constant(const std::string& name, double want) const {
    const ConstTensor* c = find_constant(graph, name);
    if (!c || c->info.dtype != DType::Float32 || c->data.size() != sizeof(float)) return false;
    float v;
    std::memcpy(&v, c->data.data(), sizeof v);
    return std::fabs(v - want) <= 1e-6 * std::fabs(want);
  }

  // Node `i` is a binary `op` one of whose inputs is the constant `value`; `other` the other input.
  bool binary_with_constant(int i, const char* op, double value, std::string* other) const {
    if (i < 0) return false;
    const Node& n = graph.nodes[static_cast<size_t>(i)];
    if (n.op_type != op || !n.domain.empty() || n.inputs.size() != 2 || n.outputs.size() != 1) return false;
    for (int k = 0; k < 2; ++k) {
      if (is_constant(n.inputs[static_cast<size_t>(k)], value)) {
        *other = n.inputs[static_cast<size_t>(1 - k)];
        return true;
      }
    }
    return false;
  }

  // The node writing `value` when `value` feeds node `reader` alone; -1 otherwise.
  int sole_producer(const std::string& value, int reader) const {
    auto it = producer.find(value);
    if (it == producer.end() || sole_consumer(graph, value) != reader) return -1;
    return static_cast<int>(it->second);
  }

  int next(int i) const { return sole_consumer(graph, graph.nodes[static_cast<size_t>(i)].outputs[0]); }
  const std::string& out(int i) const { return graph.nodes[static_cast<size_t>(i)].outputs[0]; }
};

// The tail shared by both forms: from node `act` (Erf or Tanh, output a), Add(a, 1), then either
// Mul(Mul(x, 0.5), .) or Mul(x, .) -> Mul(0.5). Appends the tail's nodes; the last is the Gelu's place.
bool match_tail(const Chain& c, int act, const std::string& x, std::vector<int>& nodes) {
  std::string a;
  const int add = c.next(act);
  if (!c.binary_with_constant(add, "Add", 1.0, &a) || a != c.out(act)) return false;
  const int mul = c.next(add);
  if (mul < 0) return false;
  const Node& m = c.graph.nodes[static_cast<size_t>(mul)];
  if (m.op_type != "Mul" || !m.domain.empty() || m.inputs.size() != 2 || m.outputs.size() != 1) return false;
  const std::string& other = m.inputs[0] == c.out(add) ? m.inputs[1] : m.inputs[0];
  if (other == c.out(add)) return false;  // Mul(a, a)
  nodes.push_back(add);
  if (other == x) {  // x * (1 + erf) then * 0.5
    std::string v;
    const int half = c.next(mul);
    if (!c.binary_with_constant(half, "Mul", 0.5, &v) || v != c.out(mul)) return false;
    nodes.push_back(mul);
    nodes.push_back(half);
    return true;
  }
  std::string v;  // (x * 0.5) * (1 + erf)
  const int half = c.sole_producer(other, mul);
  if (!c.binary_with_constant(half, "Mul", 0.5, &v) || v != x) return false;
  nodes.push_back(half);
  nodes.push_back(mul);
  return true;
}

// Erf at node e: its input from Div(x, sqrt 2) or Mul(x, 1/sqrt 2).
bool match_erf_form(const Chain& c, int e, std::string& x, std::vector<int>& nodes) {
  const Node& erf = c.graph.nodes[static_cast<size_t>(e)];
  if (erf.inputs.size() != 1 || erf.outputs.size() != 1) return false;
  const int scale = c.sole_producer(erf.inputs[0], e);
  const bool div = scale >= 0 && c.graph.nodes[static_cast<size_t>(scale)].op_type == "Div";
  if (div) {  // Div(x, sqrt 2): the divisor must be the second input
    const Node& d = c.graph.nodes[static_cast<size_t>(scale)];
    if (d.inputs.size() != 2 || !d.domain.empty() || !c.is_constant(d.inputs[1], std::sqrt(2.0))) return false;
    x = d.inputs[0];
  } else if (!c.binary_with_constant(scale, "Mul", 1.0 / std::sqrt(2.0), &x)) {
    return false;
  }
  nodes = {scale, e};
  return match_tail(c, e, x, nodes);
}

// Tanh at node t: its input from Mul(Add(x, Mul(Pow(x, 3), 0.044715)), sqrt(2/pi)).
bool match_tanh_form(const Chain& c, int t, std::string& x, std::vector<int>& nodes) {
  const Node& th = c.graph.nodes[static_cast<size_t>(t)];
  if (th.inputs.size() != 1 || th.outputs.size() != 1) return false;
  std::string inner, cubic_term, cube;
  const int scale = c.sole_producer(th.inputs[0], t);
  if (!c.binary_with_constant(scale, "Mul", std::sqrt(2.0 / M_PI), &inner)) return false;
  const int add = c.sole_producer(inner, scale);
  if (add < 0) return false;
  const Node& a = c.graph.nodes[static_cast<size_t>(add)];
  if (a.op_type != "Add" || !a.domain.empty() || a.inputs.size() != 2) return false;
  for (int k = 0; k < 2; ++k) {  // one operand is x, the other 0.044715 * x^3
    const int cubic = c.sole_producer(a.inputs[static_cast<size_t>(k)], add);
    if (!c.binary_with_constant(cubic, "Mul", 0.044715, &cube)) continue;
    const int pow = c.sole_producer(cube, cubic);
    std::string base;
    if (!c.binary_with_constant(pow, "Pow", 3.0, &base)) continue;
    const Node& p = c.graph.nodes[static_cast<size_t>(pow)];
    if (p.inputs[0] != base || base != a.inputs[static_cast<size_t>(1 - k)]) continue;  // Pow(x, 3), x the other
    x = base;
    nodes = {pow, cubic, add, scale, t};
    return match_tail(c, t, x, nodes);
  }
  return false;
}

}  // namespace

int fuse_gelu(Graph& graph, const PassOptions& options) {
  std::vector<bool> dead(graph.nodes.size(), false);
  int fused = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    if (dead[i] || !n.domain.empty() || (n.op_type != "Erf" && n.op_type != "Tanh")) continue;
    const Chain chain(graph);
    std::string x;
    std::vector<int> nodes;
    const bool erf = n.op_type == "Erf";
    const int at = static_cast<int>(i);
    if (!(erf ? match_erf_form(chain, at, x, nodes) : match_tanh_form(chain, at, x, nodes))) continue;
    bool taken = false;
    for (int k : nodes) taken = taken || dead[static_cast<size_t>(k)];
    if (taken) continue;
    const int last = nodes.back();
    Node gelu;
    gelu.name = graph.nodes[static_cast<size_t>(last)].name;
    gelu.op_type = "Gelu";
    gelu.opset = kGeluOpset;
    gelu.inputs = {x};
    gelu.outputs = {graph.nodes[static_cast<size_t>(last)].outputs[0]};
    gelu.attrs["approximate"] = std::string(erf ? "none" : "tanh");
    if (!backend_can_run(options, gelu)) continue;
    // The Gelu runs where the last node ran: x is computed before the chain's first node, and
    // every reader of the output comes after the last.
    for (int k : nodes) dead[static_cast<size_t>(k)] = true;
    dead[static_cast<size_t>(last)] = false;
    graph.nodes[static_cast<size_t>(last)] = std::move(gelu);
    ++fused;
  }
  if (fused) {
    erase_nodes(graph, dead);
    drop_unused_constants(graph);
  }
  return fused;
}

}  // namespace dnnx
