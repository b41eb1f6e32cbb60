// Note [half storage]: precision="fp16" keeps float values in IEEE binary16 on the device, and
// precision="bf16" in bfloat16; "half" below means whichever of the two the backend stores
// (Backend::half_storage), and "float16" in this note stands for it. Values, not layers, carry
// the precision: after this pass a float value is either float32 or half in the graph itself,
// so the planner's types (and the arena's sizes) say which, and every kernel sees the dtype of
// what it reads. bf16 keeps float32's exponent range with 8 significant bits (fp16: 5 exponent
// bits, 11 significant bits), so only fp16 has a range check. The rewrite, in node order:
//   - a node the backend has a half kernel for (Backend::half_unsupported_reason is "") reads
//     each float input as float16: a float16 value as it is, an initializer as a float16 copy
//     made here (round to nearest even), any other float32 value through a Cast node to FLOAT16
//     (one per value, shared by its readers). Its float outputs become float16.
//   - any other node reads each float16 input through a Cast node to FLOAT (one per value); its
//     outputs keep their types. The plan shows it as running in fp32 and why.
//   - a graph output left float16 is renamed inside the graph and a last Cast to FLOAT makes
//     the output under its own name: the caller always gets float32.
// Graph inputs keep float32, so the first layers of such a model are the entry Casts. Integer
// values (shapes, indices, sequence_lens) are never touched, and a Shape or a Size reads a
// float16 value as it is: only its dims count, and a Cast to FLOAT for it would run on every call
// though the planner folds the Shape itself (torch's ShuffleNetV2 asks each Concat for its dims:
// 30 such Casts took 0.36 of its 1.96 ms at fp16, batch 64, H100, bench/RESULTS_CUDA.md session
// 19). A node whose values leave fp16's range (Note [fp16 range], half_range.cc) stays float32
// like a node without a half kernel. So do
//   - a node the planner folds (Note [plan-time folding]): float arithmetic on shapes (a detector's
//     padding computed as ceil(h / 32) * 32) runs on the host, which has no half kernels, and a
//     half value there would leave a Pad's pads to the device;
//   - a node with subgraphs (If, Loop, Scan): its bodies are not rewritten, so they read float32
//     (the values it captures from the outer scope are its inputs, Note [subgraphs]);
//   - a node reading or writing a value whose type is not known before the run (after a
//     value-dependent shape, Note [staged plans]: a detector's box decoding after its NonZero):
//     the rewrite cannot tell which of them to convert.
#include <algorithm>
#include <set>
#include <stdexcept>

#include "runtime/plan_folding.h"
#include "runtime/passes/passes.h"
#include "runtime/passes/rewrite.h"
#include "ops/layout/cast.h"

namespace dnnx {

namespace {

class HalfRewrite {
 public:
  HalfRewrite(Graph& graph, DType half)
      : graph_(graph), half_type_(half), suffix_(half == DType::BFloat16 ? "/bf16" : "/fp16"),
        types_(value_types(graph)), fresh_(graph) {}

  bool is_float32(const std::string& name) const {
    auto it = types_.find(name);
    return !name.empty() && it != types_.end() && it->second.dtype == DType::Float32;
  }

  // Whether every value the node reads and writes has a type known before the run (a value after
  // a value-dependent shape, Note [staged plans], may have none: its type shows at run time).
  bool all_typed(const Node& node) const {
    const auto typed = [this](const std::string& name) {
      return name.empty() || types_.count(name) != 0 || half_.count(name) != 0;
    };
    return std::all_of(node.inputs.begin(), node.inputs.end(), typed) &&
           std::all_of(node.outputs.begin(), node.outputs.end(), typed);
  }

  // A node with a half kernel: float inputs as float16, float outputs become float16.
  void add_half(Node node) {
    for (std::string& in : node.inputs) {
      if (!is_float32(in) || half_.count(in)) continue;
      in = half_copy(in);
    }
    for (const std::string& out : node.outputs) {
      if (is_float32(out)) half_.insert(out);
    }
    nodes_.push_back(std::move(node));
  }

  // A node that reads its inputs' dims only (Shape, Size): as it is, whatever their types.
  void add_dims_reader(Node node) { nodes_.push_back(std::move(node)); }

  // A node without one: float16 inputs converted back to float32.
  void add_float(Node node) {
    for (std::string& in : node.inputs) {
      if (half_.count(in)) in = converted(in, DType::Float32, to_float_);
    }
    nodes_.push_back(std::move(node));
  }

  // Graph outputs left float16 are converted back under their own names, then the graph takes
  // the new node list.
  void finish() {
    for (const std::string& out : graph_.outputs) {
      if (!half_.count(out)) continue;
      const std::string inner = fresh_(out + suffix_);
      rename_output_inside(nodes_, out, inner);
      nodes_.push_back(cast_node(inner, out, DType::Float32));
    }
    graph_.nodes = std::move(nodes_);
    drop_unused_constants(graph_);
  }

 private:
  // The float16 form of a float32 value: an initializer's converted copy, else a Cast's output.
  std::string half_copy(const std::string& name) {
    const ConstTensor* c = find_constant(graph_, name);
    if (!c) return converted(name, half_type_, to_half_);
    auto it = const_half_.find(name);
    if (it != const_half_.end()) return it->second;
    auto t = std::make_shared<ConstTensor>();
    t->info = TensorInfo{c->info.shape, half_type_};
    const int64_t n = numel(c->info.shape);
    t->data.resize(static_cast<size_t>(n) * sizeof(uint16_t));
    auto* dst = t->as_mut<uint16_t>();
    for (int64_t i = 0; i < n; ++i) dst[i] = float_to_storage(c->as<float>()[i], half_type_);
    const std::string half_name = fresh_(name + suffix_);
    graph_.constants[half_name] = std::move(t);
    return const_half_[name] = half_name;
  }

  // `name` converted to `to` by one Cast node, shared by every reader (memo: value -> copy).
  std::string converted(const std::string& name, DType to, std::map<std::string, std::string>& memo) {
    auto it = memo.find(name);
    if (it != memo.end()) return it->second;
    const std::string out = fresh_(name + (to == half_type_ ? suffix_ : "/fp32"));
    nodes_.push_back(cast_node(name, out, to));
    return memo[name] = out;
  }

  Node cast_node(const std::string& from, const std::string& to_name, DType to) {
    Node cast;
    cast.name = fresh_(to_name + "/cast");
    cast.op_type = "Cast";
    cast.inputs = {from};
    cast.outputs = {to_name};
    cast.attrs["to"] = onnx_type_code(to);
    cast.opset = graph_.opset;
    return cast;
  }

  Graph& graph_;
  DType half_type_;     // Float16 or BFloat16
  std::string suffix_;  // of the names of half copies: "/fp16" or "/bf16"
  std::map<std::string, TensorInfo> types_;  // of the graph as it came (float32 values)
  FreshNames fresh_;
  std::set<std::string> half_;  // values stored as float16 (their names are unchanged)
  std::map<std::string, std::string> to_half_, to_float_, const_half_;
  std::vector<Node> nodes_;
};

bool has_subgraph(const Node& node) {
  for (const auto& kv : node.attrs) {
    if (std::holds_alternative<GraphPtr>(kv.second)) return true;
  }
  return false;
}

bool touches_float(const HalfRewrite& rewrite, const Node& node) {
  for (const std::string& in : node.inputs) {
    if (rewrite.is_float32(in)) return true;
  }
  for (const std::string& out : node.outputs) {
    if (rewrite.is_float32(out)) return true;
  }
  return false;
}

// Why a node that touches float values stays float32 though the backend may have a half kernel
// for it (the plan shows it); "" when it may go half.
std::string kept_float_reason(const HalfRewrite& rewrite, const Node& node, bool folds,
                              const std::map<std::string, std::string>& keep_fp32) {
  auto kept = keep_fp32.find(node.name);
  if (kept != keep_fp32.end()) return kept->second;  // Note [fp16 range]: Casts at its edges
  if (folds) return "computed on the host when the plan is built (Note [plan-time folding])";
  if (has_subgraph(node)) return "its subgraphs run in float32";
  // Half would need every float input converted and every float output known as half.
  if (!rewrite.all_typed(node)) return "a value's type is known at run time only (after a value-dependent shape)";
  return "";
}

}  // namespace

int half_storage(Graph& graph, DType half, const std::function<std::string(const Node&)>& half_reason,
                 const std::map<std::string, std::string>& keep_fp32) {
  if (!is_half(half)) throw std::logic_error("half_storage: expected float16 or bfloat16");
  HalfRewrite rewrite(graph, half);
  const std::vector<bool> folds = graph_folding(graph, folding_host()).nodes;  // before the rewrite
  int in_half = 0;
  std::vector<Node> nodes = std::move(graph.nodes);
  graph.nodes.clear();
  for (size_t i = 0; i < nodes.size(); ++i) {
    Node& node = nodes[i];
    if (node.op_type == "Shape" || node.op_type == "Size") {
      rewrite.add_dims_reader(std::move(node));
      continue;
    }
    if (!touches_float(rewrite, node)) {
      rewrite.add_float(std::move(node));  // nothing to convert
      continue;
    }
    node.fp32_reason = kept_float_reason(rewrite, node, folds[i], keep_fp32);
    if (node.fp32_reason.empty() && half_reason(node).empty()) {
      rewrite.add_half(std::move(node));
      ++in_half;
    } else {
      rewrite.add_float(std::move(node));
    }
  }
  rewrite.finish();
  return in_half;
}

}  // namespace dnnx
