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
// reach it. Float16 values (precision="fp16") are
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

// One flag per graph node: whether the planner folds it (above). All false without a host.
std::vector<bool> folding_nodes(const Graph& graph, const Backend* host);

// The outputs of one folding node for these input types (constant inputs carry their data),
// computed now by `host`; one tensor per node output (null where the output is omitted).
std::vector<std::shared_ptr<ConstTensor>> fold_node(const Backend& host, const Node& node, const OpDef& def,
                                                    const std::vector<ValueInfo>& inputs,
                                                    const std::vector<TensorInfo>& outputs);

// Whether the folding can run here: no float16 value among the node's inputs and outputs.
bool host_can_fold(const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs);

}  // namespace dnnx
