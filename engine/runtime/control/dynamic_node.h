// Running the value-shaped node a staged plan stops at (Note [staged plans] in runtime/stages.h):
// NonZero and Compress through their OpDef's host `evaluate`, If, Loop and Scan here, each body
// through its own Engine (Engine::body), planned per input shape on the model's backend.
#pragma once
#include <vector>

#include "ir/graph.h"

namespace dnnx {

class Engine;

// The node's outputs (null where omitted) from its inputs (null where omitted), on the host.
std::vector<ConstTensorPtr> run_dynamic_node(Engine& owner, const Node& node, const std::vector<ConstTensorPtr>& inputs);

// The ops with subgraphs (loop.cc, scan.cc).
std::vector<ConstTensorPtr> run_if(Engine& owner, const Node& node, const std::vector<ConstTensorPtr>& inputs);
std::vector<ConstTensorPtr> run_loop(Engine& owner, const Node& node, const std::vector<ConstTensorPtr>& inputs);
std::vector<ConstTensorPtr> run_scan(Engine& owner, const Node& node, const std::vector<ConstTensorPtr>& inputs);

}  // namespace dnnx
