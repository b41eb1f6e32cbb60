// The op registry: one OpDef per ONNX op type holds its meaning, independent of any backend —
// attribute validation, output-shape inference and whether outputs may alias input 0.
// Adding an op: the checklist is docs/architecture.md, "Adding an operator".
#pragma once
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"

namespace dnnx {

// What the planner knows about one node input: type, shape and, for constants, the data.
// An omitted optional input has present == false.
struct ValueInfo {
  TensorInfo info;
  const ConstTensor* constant = nullptr;
  bool present = true;
};

struct OpDef {
  // Checks attributes and opset once at load; throws UnsupportedModelError naming the node.
  std::function<void(const Node&)> validate;
  // Output types from input types (one entry per node output, omitted ones included);
  // throws InvalidModelError for shapes that cannot agree, with the shapes in the message.
  std::function<std::vector<TensorInfo>(const Node&, const std::vector<ValueInfo>&)> infer;
  // Output 0 is input 0's bytes under a new shape (Reshape, Flatten, Identity, ...): no copy.
  bool aliases_input0 = false;
  // Reads only input 0's shape, never its data (Shape, Size, EyeLike): known once the shapes are,
  // so plan-time folding computes it without the input's values (runtime/plan_folding.cc).
  bool reads_input0_shape_only = false;
  std::vector<int> value_inputs;  // inputs whose values infer reads (the planner must know them when it plans)
  // Note [staged plans] (runtime/stages.h): the output shapes follow from input values computed
  // at run time (NonZero, Compress, If, Loop, Scan). The planner stops a plan before such a node
  // unless `evaluate` can compute it now (every input it reads a constant of the plan); the
  // engine runs the node itself, on the host, and plans the rest per shape. `infer` is then
  // called only with constant inputs.
  bool value_shaped = false;
  // The outputs from whole input tensors (null where omitted), on the host: how the engine runs a
  // value_shaped op without subgraphs. Errors name the node.
  std::function<std::vector<ConstTensorPtr>(const Node&, const std::vector<ConstTensorPtr>&)> evaluate;
  // Opset range this definition implements (inclusive), in versions of the op's own domain
  // (Note [op domains] in ir/graph.h: com.microsoft's ops start at 1).
  int min_opset = 7;
  // Made by a rewrite pass (Conv+Relu, ...), never read from a model: not listed as supported.
  bool fused = false;
  // Why this node cannot be fine-tuned on any backend ("" when it can; empty: every node of the
  // op can, wherever a backend registers its gradient): asked by the trainer before it plans
  // the node's gradient, with the node's inputs and which of them need a gradient (the
  // BatchNorm statistics, an LSTM's clip). What one backend's kernel cannot train stays in
  // that backend's gradient factory.
  std::function<std::string(const Node&, const std::vector<ValueInfo>&, const std::vector<bool>& needs_grad)>
      untrainable;
};

// Keyed by op_key (Note [op domains] in ir/graph.h): "Conv", "com.microsoft::QLinearAdd".
class OpRegistry {
 public:
  // Movable, not copyable: the index points into this object's map.
  OpRegistry() = default;
  OpRegistry(OpRegistry&&) = default;
  OpRegistry& operator=(OpRegistry&&) = default;
  OpRegistry(const OpRegistry&) = delete;
  OpRegistry& operator=(const OpRegistry&) = delete;

  void add(const std::string& key, OpDef def);
  const OpDef* find(const std::string& key) const;
  const OpDef* find(const Node& node) const { return find(node.op_key()); }
  std::vector<std::string> names() const;  // op keys, sorted, fused ops left out
  std::string names_joined() const;        // "Add, Concat, ..."

 private:
  std::map<std::string, OpDef> defs_;  // sorted, for names()
  // The same defs by key for find(), which planning asks per node (a staged model's ~180
  // continuations each validate and fold what remains of the graph).
  std::unordered_map<std::string, const OpDef*> index_;
};

// The whole registry, built once (an explicit list: ops/registry.cc).
const OpRegistry& op_registry();

// Shape helpers shared by op files.
// Normalises a possibly negative axis into [0, rank); throws InvalidModelError naming the node.
int64_t normalize_axis(const Node& node, int64_t axis, int64_t rank);
// The input's type, refusing an absent one and checking its dtype.
const TensorInfo& require_input(const Node& node, const std::vector<ValueInfo>& inputs, size_t i,
                                const char* what);
void require_float(const Node& node, const TensorInfo& info, const char* what);
// A per-axis ints attribute (strides, pads, dilations) of `count` values, or `fallback` repeated
// when absent; InvalidModelError naming the attribute when it holds another count.
Shape attr_ints_of_size(const Node& node, const char* name, size_t count, int64_t fallback);
// numpy-style multidirectional broadcast of two shapes.
Shape broadcast_shapes(const Node& node, const Shape& a, const Shape& b);

}  // namespace dnnx
