// Note [plan-time folding]: a dynamic export computes its shapes from its inputs' shapes
// (PyTorch: Shape -> Gather -> Unsqueeze -> Concat -> Reshape, int64 Mul/Div for a channel
// shuffle, ConstantOfShape for an LSTM's zero state). Once a plan is built for concrete input
// shapes, every such value is known, so the planner evaluates those nodes on the host (the CPU
// backend's kernels: `host`) and their outputs become the plan's constants: Reshape, Expand,
// ConstantOfShape and the rest read them as they read an initializer, nothing of it runs per
// call, and a symbolic-batch model plans the same kernels as one exported at a fixed batch.
//
// Which nodes fold is a property of the graph, not of the shapes: a node folds when every input
// it reads is a constant, the output of a Shape (whose value is its input's shape), or the output
// of another folding node, and the host has a kernel for it. The load-time checks skip the
// device backend's refusal for those nodes (CUDA has no ConstantOfShape kernel): they never
// reach it. Half values (precision="fp16" or "bf16") are
// left to the device backend, the host having no half kernels.
#pragma once
#include <memory>
#include <vector>

#include "runtime/backend.h"

namespace dnnx {

// The host that folds: the CPU backend, set once by whoever builds engines (the Python module at
// import); null until then, and then nothing folds. Engines and the passes' type inference
// (runtime/passes/rewrite.h: value_types) read it.
void set_folding_host(std::shared_ptr<const Backend> host);
const Backend* folding_host();

// Note [value inputs]: a shape-like input (Reshape's shape, Squeeze/Unsqueeze/Reduce axes, Slice's
// starts/ends/axes/steps, Split sizes, Expand's shape, ConstantOfShape's input, Pad's pads: the
// OpDef's `value_inputs`) that is a graph input, or is computed on the host from one, makes that
// graph input's value part of the plan key: the planner treats it as a constant of the plan,
// folds what follows from it, and a new value plans (and on a device captures) anew. Which graph
// inputs these are follows from the graph: walking back from every value slot through the nodes
// the host can run (a Shape's data input needs only its shape) to the graph inputs it reaches.
// A value slot fed by a node the host cannot run stays as it was: the plan needs it constant, and
// planning says so (UnsupportedModelError naming the node).
struct GraphFolding {
  std::vector<bool> nodes;        // one flag per graph node: whether the planner folds it
  std::vector<int> value_inputs;  // graph-input positions whose values join the plan key, ascending
};

// What folds (above, and Note [plan-time folding]); nothing without a host.
GraphFolding graph_folding(const Graph& graph, const Backend* host);

// Folds, once at load, every node whose inputs are all constants of the graph (a Constant
// chain, arithmetic on initializers): its outputs become graph constants and the node goes, so
// the passes see the values and no plan computes them again. Returns how many nodes went.
int fold_graph_constants(Graph& graph, const Backend* host);

// The outputs of one folding node for these input types (constant inputs carry their data),
// computed now by `host`; one tensor per node output (null where the output is omitted).
std::vector<std::shared_ptr<ConstTensor>> fold_node(const Backend& host, const Node& node, const OpDef& def,
                                                    const std::vector<ValueInfo>& inputs,
                                                    const std::vector<TensorInfo>& outputs);

// Whether the folding can run here: every input whose data the node reads has a constant (input
// 0 of a reads_input0_shape_only op needs only its shape: a Shape of a value the host did not fold),
// and no half value among the data it reads and writes.
bool host_can_fold(const OpDef& def, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs);

}  // namespace dnnx
