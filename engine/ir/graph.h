// The engine's IR: nodes with plain-value attributes, constant tensors and typed graph inputs.
// Python's importer (python/dnnx/_importer.py) builds it from an onnx.ModelProto.
// A graph-valued attribute (If's branches, Loop's and Scan's body) is a Graph of its own
// (Note [subgraphs]).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "ir/errors.h"
#include "ir/tensor.h"

namespace dnnx {

struct Graph;
using GraphPtr = std::shared_ptr<const Graph>;

// Note [subgraphs]: a subgraph (If's then_branch/else_branch, Loop's and Scan's body) is a
// self-contained Graph: the importer resolves every name a body reads from an enclosing scope
// (at any depth) and passes it in explicitly. Such names are appended, in one order, to the
// node's inputs (so liveness, staging and folding see them as ordinary reads) and to every body
// graph's inputs (after the body's own formal inputs); the node's int attribute kCapturedAttr
// says how many there are. So a body runs from its inputs alone, and nested bodies repeat the
// rule one level down.
using Attribute = std::variant<int64_t, float, std::string, std::vector<int64_t>,
                               std::vector<float>, std::vector<std::string>, ConstTensorPtr, GraphPtr>;

// How many trailing inputs of a node with subgraphs are outer-scope values (Note [subgraphs]).
inline constexpr const char* kCapturedAttr = "__captured";

// Note [op domains]: an ONNX node is named by (domain, op_type), and each domain has its own opset
// versions. The IR keeps the domain as the importer normalised it: "" for ai.onnx (the file may
// say "" or "ai.onnx"), "com.microsoft" for onnxruntime's contrib ops. Node::opset is the version
// the model imports for the node's domain (Graph::opsets). The registries (OpRegistry, and each
// backend's KernelRegistry) are keyed by op_key(): the op type alone for ai.onnx, so that every
// standard op keeps its plain name, and "domain::op_type" otherwise ("com.microsoft::QLinearAdd").
// An OpDef's min_opset is a version of its own domain.
constexpr const char kMicrosoftDomain[] = "com.microsoft";
// "QLinearConv" for ai.onnx ("" or "ai.onnx"), "com.microsoft::QLinearAdd" for the others.
std::string op_key(const std::string& domain, const std::string& op_type);

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;  // "" for ai.onnx (Note [op domains])
  std::vector<std::string> inputs;   // "" marks an omitted optional input
  std::vector<std::string> outputs;  // "" marks an omitted optional output
  std::map<std::string, Attribute> attrs;
  int opset = 0;  // the opset the model imports for the node's domain: per-opset semantics depend on it
  // precision="fp16": why this node stays float32 though the backend has a half kernel for it
  // (its values leave fp16's range: runtime/passes/half_range.cc); "" otherwise. Set by half_storage.
  std::string fp32_reason;
  // Why this window op keeps ONNX's layout though the backend runs it channels-last (Note
  // [narrow regions] in runtime/passes/channels_last.cc); "" otherwise. Set by channels_last.
  std::string layout_reason;

  // "node 'conv1' (Conv)", "node 'add1' (com.microsoft::QLinearAdd)": the prefix of every error about this node.
  std::string where() const;
  // The registries' key of its op (Note [op domains]).
  std::string op_key() const { return dnnx::op_key(domain, op_type); }

  bool has_input(size_t i) const { return i < inputs.size() && !inputs[i].empty(); }
  bool has_output(size_t i) const { return i < outputs.size() && !outputs[i].empty(); }
  bool has_attr(const std::string& key) const { return attrs.count(key) != 0; }

  // Typed attribute access; a present attribute of the wrong kind is an InvalidModelError.
  int64_t attr_int(const std::string& key, int64_t fallback) const;
  float attr_float(const std::string& key, float fallback) const;
  std::string attr_string(const std::string& key, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const std::string& key, const std::vector<int64_t>& fallback) const;
  std::vector<float> attr_floats(const std::string& key, const std::vector<float>& fallback) const;
  std::vector<std::string> attr_strings(const std::string& key,
                                        const std::vector<std::string>& fallback) const;
  // A graph attribute (Note [subgraphs]); an absent one is an InvalidModelError naming it.
  const GraphPtr& attr_graph(const std::string& key) const;
  // The number of trailing outer-scope inputs (kCapturedAttr; 0 without subgraphs).
  size_t captured_inputs() const;

  // Refuses (UnsupportedModelError) any attribute not in `known`, naming it.
  void expect_only_attrs(const std::vector<std::string>& known) const;
};

// A graph input: dims < 0 are symbolic, their names kept in `symbols` for messages.
struct GraphInput {
  std::string name;
  Shape dims;
  std::vector<std::string> symbols;  // same length as dims; "" for fixed dims
  DType dtype = DType::Float32;
  std::string dims_str() const;       // "[N,1,28,28]"
};

struct Graph {
  int opset = 0;                       // ai.onnx's
  std::map<std::string, int> opsets;   // every domain the model imports -> its version ("" = ai.onnx)
  std::vector<Node> nodes;  // topologically sorted
  std::map<std::string, ConstTensorPtr> constants;
  std::vector<GraphInput> inputs;
  std::vector<std::string> outputs;
  // The outputs' declared types, where the importer gives them (a body's: a Loop or Scan output
  // of no iterations takes its dtype and dims); may be empty.
  std::vector<GraphInput> output_decls;
};

// The graph inputs' declared shapes with every symbolic dim taken as 1: what load-time
// planning checks before any real input arrives.
std::vector<Shape> default_input_shapes(const Graph& graph);

template <class E>
[[noreturn]] void node_fail(const Node& node, const std::string& message) {
  throw E(node.where() + ": " + message);
}

}  // namespace dnnx
